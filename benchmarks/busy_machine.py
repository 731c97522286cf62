"""Benchmark: what a user sees when other programs hold the CPU, from the goals of issue 35.

    .venv/bin/python benchmarks/busy_machine.py mnist [EPOCHS]
    .venv/bin/python benchmarks/busy_machine.py xla
    .venv/bin/python benchmarks/busy_machine.py runs [N]

`mnist`: two CPU-bound processes (`python -c 'while True: pass'`) run while `mnist flax` starts (the
attainable matmul rate, the train step) and are stopped when the first epoch starts; prints the lines
with a share of peak or a loop overhead, every share and overhead recorded, and which figures were
flagged busy. Goals: no share of peak above 100 %, no loop overhead below -5 %, the busy figures named.

`xla`: the same two processes through all of `xla all --matrix-size 256`: prints how many figures were
flagged busy (goal: every one).

`runs N`: N runs of `xla numpy --matrix-size 64 --no-memory` with nothing started beside them; prints, per
run, how many figures were flagged busy and the most other processes took, then how many of the N runs
flagged anything (goal on a quiet machine: at most 1 in 20; on a shared one it counts the others' load).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HOG = [sys.executable, "-c", "while True: pass"]


def start_hogs() -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen(HOG) for _ in range(2)]


def stop(hogs: list[subprocess.Popen[bytes]]) -> None:
    for hog in hogs:
        hog.kill()
        hog.wait()


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def busy_of(record: dict[str, object]) -> str:
    contention = record.get("contention")
    if not isinstance(contention, dict) or not contention:
        return "no contention recorded"
    if contention.get("unknown"):
        return f"unknown ({contention['unknown']})"
    return f"{'BUSY' if contention.get('busy') else 'quiet'} (others {contention.get('others_cores')} cores)"


def mnist(epochs: int, results: Path) -> None:
    command = [sys.executable, "main.py", "mnist", "flax", "--dry-run", "--epochs", str(epochs), "--comet", "off",
               "--results", str(results)]
    hogs = start_hogs()
    lines: list[str] = []
    env = {**os.environ, "COLUMNS": "200"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env) as child:
        assert child.stdout is not None
        for line in child.stdout:
            lines.append(line.rstrip())
            if hogs and "train step" in line:  # the step is measured: let the epochs run on a quiet machine
                stop(hogs)
                hogs = []
                print("(the two CPU-bound processes stopped after the train step)")
    stop(hogs)
    print(f"exit {child.returncode}")
    for line in lines:
        if any(word in line for word in ("attainable", "peak", "train step", "epoch ", "loop overhead", "busy")):
            print("  " + line)
    for record in records(results):
        metrics = record.get("metrics")
        shown = {k: v for k, v in (metrics.items() if isinstance(metrics, dict) else []) if k in (
            "gflops", "peak_share", "loop_overhead")}
        print(f"{record['case']}: {busy_of(record)} {shown}")


def xla(results: Path) -> None:
    hogs = start_hogs()
    try:
        code = subprocess.run([sys.executable, "main.py", "xla", "all", "--matrix-size", "256", "--results",
                               str(results)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False).returncode
    finally:
        stop(hogs)
    timed = [r for r in records(results) if r.get("median_s")]
    flagged = [r for r in timed if isinstance(r.get("contention"), dict) and r["contention"].get("busy")]  # type: ignore[union-attr]
    print(f"exit {code}; {len(flagged)} of {len(timed)} timed figures flagged busy")
    for record in timed:
        if record not in flagged:
            print(f"  not flagged: {record['backend']} {record['case']}: {busy_of(record)}")


def runs(count: int, folder: Path) -> None:
    flagging = 0
    for index in range(count):
        results = folder / f"run{index}.jsonl"
        load = os.getloadavg()[0]
        code = subprocess.run([sys.executable, "main.py", "xla", "numpy", "--matrix-size", "64", "--no-memory",
                               "--results", str(results)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              check=False).returncode
        timed = [r for r in records(results) if r.get("median_s")] if results.exists() else []
        seen = [r["contention"] for r in timed if isinstance(r.get("contention"), dict)]
        flagged = [c for c in seen if c.get("busy")]  # type: ignore[union-attr]
        taken = [c["others_cores"] for c in seen if isinstance(c.get("others_cores"), (int, float))]  # type: ignore[index, union-attr]
        flagging += bool(flagged)
        print(f"run {index + 1:2d}/{count}: exit {code}; {len(flagged)} of {len(timed)} figures flagged busy; "
              f"others took at most {max(taken, default=float('nan')):.2f} cores; load average before {load:.2f}")
    print(f"{flagging} of {count} runs flagged a figure busy")


def main() -> None:
    what = sys.argv[1] if len(sys.argv) > 1 else "mnist"
    print(f"# load average before: {os.getloadavg()[0]:.2f}, {len(os.sched_getaffinity(0))} cores")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.jsonl"
        if what == "xla":
            xla(results)
        elif what == "runs":
            runs(int(sys.argv[2]) if len(sys.argv) > 2 else 20, Path(tmp))
        else:
            mnist(int(sys.argv[2]) if len(sys.argv) > 2 else 2, results)
    print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
