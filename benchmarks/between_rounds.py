"""Why a verdict's dense linear algebra stays undecided here: the CPU's speed wanders over seconds, and
interleaving frameworks inside one process changes what is measured.

Two measurements, each in fresh processes (the verdict's rounds are fresh processes):

1. drift: one process times a 1000×1000 float64 inverse (NumPy, its BLAS's default threads) in back-to-back
   0.2 s windows (the measurement core's default sampling window, `measure/timing.MIN_TIME_S`) for SECONDS, and
   prints each window's fastest sample. On a machine whose speed is steady they agree within a few %; where
   they wander by 20 % or more over seconds, two frameworks measured one after the other in a round differ by as
   much, whatever their real difference: the verdict's rounds spread by that much, and a 5–10 % difference
   between frameworks needs more rounds than any budget here allows (benchmarks/verdict_decidable.py).
2. interleaving: would measuring the frameworks call by call, alternately, in one process cancel that drift?
   One process alternates NumPy's and JAX's 1000×1000 float64 matmul call by call for 0.4 s; another times
   each alone. If the alternating ratio is not the ratio alone, alternating changes the work measured (thread
   pools of one library still spinning when the other's call starts), and cannot be how frameworks are compared.

    .venv/bin/python benchmarks/between_rounds.py [SECONDS] [PROCESSES]
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time

WINDOW_S = 0.2
SIZE = 1000


def drift(seconds: float) -> list[float]:
    import numpy as np

    a = np.random.default_rng(0).random((SIZE, SIZE))
    for _ in range(3):
        np.linalg.inv(a)
    out = []
    began = time.perf_counter()
    while time.perf_counter() - began < seconds:
        samples, start = [], time.perf_counter()
        while time.perf_counter() - start < WINDOW_S:
            t = time.perf_counter()
            np.linalg.inv(a)
            samples.append(time.perf_counter() - t)
        out.append(min(samples))
    return out


def interleaving(mode: str) -> dict[str, float]:
    """The fastest matmul of each library over 0.4 s: `alternate` call by call, or `alone` one after the other."""
    import numpy as np
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    a, b = np.random.default_rng(0).random((2, SIZE, SIZE))
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    product = jax.jit(jnp.matmul)
    calls = {"numpy": lambda: a @ b, "jax": lambda: product(ja, jb).block_until_ready()}
    for call in calls.values():
        for _ in range(3):
            call()
    best = {name: float("inf") for name in calls}
    turns = [list(calls)] if mode == "alternate" else [[name] for name in calls]
    for names in turns:
        start = time.perf_counter()
        while time.perf_counter() - start < 0.4:
            for name in names:
                t = time.perf_counter()
                calls[name]()
                best[name] = min(best[name], time.perf_counter() - t)
    return best


def child(argv: list[str]) -> str:
    return subprocess.run([sys.executable, __file__, *argv], check=True, capture_output=True, text=True).stdout


def main() -> None:
    if sys.argv[1:2] == ["--drift"]:
        print(json.dumps(drift(float(sys.argv[2]))))
        return
    if sys.argv[1:2] == ["--interleaving"]:
        print(json.dumps(interleaving(sys.argv[2])))
        return
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 6.0
    processes = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")
    everything = []
    for index in range(processes):
        windows = json.loads(child(["--drift", str(seconds)]))
        everything += windows
        print(f"drift, process {index + 1}: {len(windows)} windows of {WINDOW_S} s, fastest sample of each (ms): "
              + " ".join(f"{w * 1e3:.0f}" for w in windows))
    print(f"drift: windows' fastest samples from {min(everything) * 1e3:.1f} to {max(everything) * 1e3:.1f} ms "
          f"({max(everything) / min(everything):.2f}×), their spread (sd of logs) "
          f"{statistics.stdev([math.log(w) for w in everything]):.3f}")
    for index in range(processes):
        alone = json.loads(child(["--interleaving", "alone"]))
        alternate = json.loads(child(["--interleaving", "alternate"]))
        print(f"interleaving, pair {index + 1}: jax / numpy matmul, each alone {alone['jax'] / alone['numpy']:.2f}×"
              f" ({alone['jax'] * 1e3:.1f} / {alone['numpy'] * 1e3:.1f} ms); call by call "
              f"{alternate['jax'] / alternate['numpy']:.2f}× ({alternate['jax'] * 1e3:.1f} / "
              f"{alternate['numpy'] * 1e3:.1f} ms)")
    print(f"load average {os.getloadavg()[0]:.1f} (1 min) on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
