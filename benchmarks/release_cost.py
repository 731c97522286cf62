"""What handing freed memory back before each case costs a round (`measure/memory.release_freed_memory`).

The harness calls it once a case (and before each single-pass case): a full cyclic collection, then glibc's
`malloc_trim`. With JAX and PyTorch imported a full collection walks every object they made; since 2026-11-28 the
survivors are frozen (`gc.freeze`) so that the next call walks only what was made since. This script runs one group
command in fresh processes, the two ways in turn (`freeze`: today's code; `collect`: the same call without the
freeze, as before), and prints per way the calls, the seconds they took in all (median over the rounds) and the
command's wall time:

    .venv/bin/python benchmarks/release_cost.py [--rounds 3] -- xla all --matrix-size 1000

Each child writes to a throwaway store.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("collect", "freeze")


def child(mode: str, argv: list[str]) -> None:
    """Run the CLI on `argv` in this process, timing every release; print the totals as JSON on stderr's last line."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    import jax_benchmarks.measure.harness as harness
    import jax_benchmarks.measure.memory as memory

    spent: list[float] = []
    today = memory.release_freed_memory

    def without_freeze() -> None:  # the call as it was before 2026-11-28
        gc.collect()
        trim = memory._malloc_trim()
        if trim is not None:
            trim(0)

    chosen = today if mode == "freeze" else without_freeze

    def timed() -> None:
        start = time.perf_counter()
        chosen()
        spent.append(time.perf_counter() - start)

    memory.release_freed_memory = timed
    harness.release_freed_memory = timed
    from jax_benchmarks.cli.root import main

    began = time.perf_counter()
    try:
        main(argv)
    except SystemExit:
        pass
    finally:
        print(json.dumps({"calls": len(spent), "release_s": sum(spent), "wall_s": time.perf_counter() - began}),
              file=sys.stderr)


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    found: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.rounds):
            for mode in MODES if index % 2 == 0 else MODES[::-1]:
                store = Path(folder) / f"{mode}-{index}.jsonl"
                done = subprocess.run([sys.executable, __file__, "--child", mode, *args.command, "--results",
                                       str(store)], capture_output=True, text=True)
                found[mode].append(json.loads(done.stderr.strip().splitlines()[-1]))
    print(f"{' '.join(args.command)}: {args.rounds} rounds a way, in turn")
    for mode in MODES:
        rows = found[mode]
        print(f"{mode:<8} calls {statistics.median(r['calls'] for r in rows):.0f}, release "
              f"{statistics.median(r['release_s'] for r in rows):.2f} s in all, command "
              f"{statistics.median(r['wall_s'] for r in rows):.1f} s (medians)")


if __name__ == "__main__":
    main()
