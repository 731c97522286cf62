"""How much does the C allocator's state move an eager PyTorch figure? Fresh processes, one after the other.

In one-process `jit all` rounds (NumPy, then PyTorch, then JAX in one interpreter), PyTorch eager's
f(x) = 0.2·x + sin(x) + cos(2x) over 10⁶ float32 items ran at 1.6–1.8 ms in some rounds and 4.5–7.6 ms in others;
alone it runs at 1.5–1.9 ms. Each call makes 4 MB temporaries. glibc serves a block that large from the heap, or maps it
afresh (`mmap`, every page faulted in, unmapped on free) where the block is above its mmap threshold, which moves
with what the process freed before. This times the call (the fastest of 200) in fresh processes: alone; after a
NumPy run of the same function (as in `jit all`); and with glibc told to map every block above 128 KiB
(`MALLOC_MMAP_THRESHOLD_=131072`, which also stops the threshold from moving), the state in which every temporary
is mapped afresh; and alone with the heap kept (blocks up to 32 MiB, glibc's largest threshold, from the heap, and
the heap never given back: `MALLOC_TRIM_THRESHOLD_`), the state in which none is.

    .venv/bin/python benchmarks/allocator_state.py [--runs 4]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time

N = 1_000_000
CALLS = 200


def fastest_ms(fn: object) -> float:
    best = math.inf
    for _ in range(CALLS):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - began)
    return best * 1e3


def child(numpy_first: bool) -> None:
    """One fresh process: (NumPy's f first, where asked) then PyTorch eager's f; prints the PyTorch figure (ms)."""
    if numpy_first:
        import numpy as np

        x = np.random.default_rng(0).random(N, dtype=np.float32)
        fastest_ms(lambda: 0.2 * x + np.sin(x) + np.cos(2 * x))
    import torch

    xt = torch.rand(N)
    f = lambda: 0.2 * xt + torch.sin(xt) + torch.cos(2 * xt)  # noqa: E731
    f()
    print(f"{fastest_ms(f):.3f}")


MODES = {
    "alone": (False, {}),
    "after NumPy (as in jit all)": (True, {}),
    "after NumPy, every block above 128 KiB mapped afresh": (True, {"MALLOC_MMAP_THRESHOLD_": "131072"}),
    "alone, the heap kept (blocks to 32 MiB, never trimmed)": (False, {"MALLOC_MMAP_THRESHOLD_": "33554432",
                                                                       "MALLOC_TRIM_THRESHOLD_": "1073741824"}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4, help="fresh processes per mode, the modes taking turns")
    parser.add_argument("--child", choices=("plain", "numpy-first"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child == "numpy-first")
        return
    with open("/proc/loadavg", encoding="ascii") as load:
        print(f"load average {load.read().split()[0]} (1 min); PyTorch eager f over {N:,} float32 items, fastest of "
              f"{CALLS} calls, one fresh process a figure")
    taken: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(args.runs):
        for mode, (numpy_first, env) in MODES.items():
            out = subprocess.run([sys.executable, __file__, "--child", "numpy-first" if numpy_first else "plain"],
                                 env={**os.environ, **env}, capture_output=True, text=True, check=True).stdout
            taken[mode].append(float(out.split()[-1]))
    for mode, ms in taken.items():
        print(f"{mode:56} {' '.join(f'{m:.2f}' for m in ms)} ms")


if __name__ == "__main__":
    main()
