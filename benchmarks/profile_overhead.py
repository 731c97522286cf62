"""Benchmark: does --profile change any timed figure beyond the spread between rounds?

    .venv/bin/python benchmarks/profile_overhead.py [rounds] [matrix size]     (default: 4 rounds, N = 500)

Runs `xla all` on the CPU in fresh processes, `rounds` times with --profile and `rounds` times without,
alternating which goes first from round to round (so the machine's drift hits both alike). For every figure
(backend, case) it prints the median over rounds of the round's median with and without --profile, their ratio,
and the spread between rounds (the range of the round medians, the wider of the two arms): a figure whose
difference is within that spread is one --profile did not change beyond the rounds' own variation. It also
prints each arm's wall time per process: the profiling pass's cost, which is never inside a figure.

`xla all`, not `verdict` (which passes --profile on to its rounds too): one group's figures, side by side, in
a few minutes; the profiling pass is the measurement core's, the same for every command that runs cases.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def run(size: int, profile: bool, folder: Path) -> tuple[list[dict[str, Any]], float]:
    """One `xla all` in a fresh process on the CPU; its records and its wall time."""
    cmd = [sys.executable, str(REPO / "main.py"), "xla", "all", "--device", "cpu", "--matrix-size", str(size),
           "--results", str(folder / "results.jsonl"), "--json", *(["--profile"] if profile else [])]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=dict(os.environ))
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    records: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return records, wall


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    medians: dict[bool, dict[tuple[str, str], list[float]]] = {True: {}, False: {}}
    walls: dict[bool, list[float]] = {True: [], False: []}
    profiled: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(rounds):
            for profile in ((True, False) if index % 2 == 0 else (False, True)):
                records, wall = run(size, profile, Path(scratch))
                walls[profile].append(wall)
                for record in records:
                    medians[profile].setdefault((record["backend"], record["case"]), []).append(record["median_s"])
                if profile:
                    profiled += records
    print(f"xla all, N = {size}, on the CPU: {rounds} rounds with --profile and {rounds} without, alternating")
    print(f"{'backend':8} {'case':28} {'without':>10} {'with':>10} {'ratio':>6} {'spread':>10}  within spread")
    within = 0
    for key in sorted(medians[False]):
        without, with_profile = medians[False][key], medians[True].get(key, [])
        if len(with_profile) != len(without):
            print(f"{key[0]:8} {key[1]:28} missing in one arm")
            continue
        a, b = statistics.median(without), statistics.median(with_profile)
        spread = max(max(without) - min(without), max(with_profile) - min(with_profile))
        inside = abs(b - a) <= spread
        within += inside
        print(f"{key[0]:8} {key[1]:28} {a * 1e3:8.3f}ms {b * 1e3:8.3f}ms {b / a:6.3f} {spread * 1e3:8.3f}ms  "
              f"{'yes' if inside else 'NO'}")
    print(f"{within} of {len(medians[False])} figures within the rounds' spread")
    print(f"wall time per process: without {statistics.median(walls[False]):.1f} s, "
          f"with --profile {statistics.median(walls[True]):.1f} s (median of {rounds})")
    traced = sum(r["profile"].get("profile_status") == "measured" for r in profiled)
    print(f"profiled records with a trace: {traced} of {len(profiled)}")


if __name__ == "__main__":
    main()
