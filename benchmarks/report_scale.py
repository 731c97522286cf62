"""Benchmark: wall time and peak memory of `python main.py report` on 100,000 records (goal ≤ 2 s, ≤ 300 MB).

    .venv/bin/python benchmarks/report_scale.py [records] [OTHER_CHECKOUT]

With OTHER_CHECKOUT (e.g. `git archive <commit> | tar -x -C /tmp/before`), the same file is reported by
that checkout's main.py too, in the same run: on a shared machine only figures measured side by side compare.

Builds a results file in a temporary folder: runs of 20 records each, cycling through the groups, every record
with ~48 raw samples and a full environment (about 1.8 KB a line: 100,000 records make a 178 MB file). Then runs
`report` in a child process per mode and reads that child's own peak RSS (`os.wait4`'s resource usage).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GROUPS = ("xla", "jit", "autograd", "scipy", "mnist")
BACKENDS = ("numpy", "pytorch", "jax", "flax")
RUN_SIZE = 20
SAMPLES = 48
ENV = {
    "python": "3.11.7", "numpy": "2.4.6", "scipy": "1.17.1", "jax": "0.10.2", "jaxlib": "0.10.2",
    "flax": "0.12.8", "optax": "0.2.8", "torch": "2.13.0+cpu",
    "platform": "Linux-6.18.44-x86_64-with-glibc2.36", "cpu": "AMD EPYC", "cpu_cores": 2, "gpu": None,
    "git_commit": "a5b1e6f44b62", "xla_flags": None,
}
MODES = {
    "table (latest run of each group)": [],
    "csv": ["--format", "csv"],
    "json": ["--format", "json"],
    "--baseline previous": ["--baseline", "previous"],
    "--run (one old run)": ["--run", "{old_run}"],
}


def write_results(path: Path, count: int) -> str:
    """`count` records as JSON lines; returns the id of an early run (for --run)."""
    rng = random.Random(0)
    old_run = ""
    with path.open("w", encoding="utf-8") as fh:
        for i in range(count):
            run = i // RUN_SIZE
            run_id = f"2025{run // 100000:04d}T{run % 100000:06d}Z-{run:06x}"
            old_run = old_run or run_id
            scale = 1e-3 * (1 + i % RUN_SIZE)
            samples = [scale * rng.lognormvariate(0, 0.05) for _ in range(SAMPLES)]
            ordered = sorted(samples)
            record = {  # the field order of Record: schema_version first, env last
                "schema_version": 1, "run_id": run_id, "timestamp": f"2025-01-01T00:00:{run % 60:02d}+00:00",
                "group": GROUPS[run % len(GROUPS)], "backend": BACKENDS[i % len(BACKENDS)], "variant": None,
                "case": f"matmul_{(i % RUN_SIZE) * 100}x{(i % RUN_SIZE) * 100}_float64", "device": "cpu",
                "dtype": "float64", "params": {"matrix_size": (i % RUN_SIZE) * 100, "seed": 0},
                "median_s": ordered[SAMPLES // 2], "iqr_s": ordered[3 * SAMPLES // 4] - ordered[SAMPLES // 4],
                "min_s": ordered[0], "repeats": SAMPLES, "samples_s": samples, "compile_s": None, "noisy": False,
                "metrics": {"first_call_s": scale * 2, "gflops": 1.5}, "checks": {}, "env": ENV,
            }
            fh.write(json.dumps(record, separators=(",", ":")) + "\n")  # as Record.model_dump_json writes
    return old_run


def measure(repo: Path, args: list[str]) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS in MB, exit code) of one `main.py report` child process.
    CPU time (user + system) is shown too: on a shared machine the wall time includes waiting for a core."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, str(repo / "main.py"), "report", *args],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=repo)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    assert child.stderr is not None
    errors = child.stderr.read().decode(errors="replace").strip()
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        print(f"  exit {child.returncode}: {errors[-300:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, child.returncode  # ru_maxrss is in KiB on Linux


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    checkouts = {"this checkout": REPO}
    if len(sys.argv) > 2:
        checkouts[sys.argv[2]] = Path(sys.argv[2]).resolve()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.jsonl"
        old_run = write_results(path, count)
        size_mb = path.stat().st_size / 1e6
        print(f"{count:,} records, {size_mb:.0f} MB ({path.stat().st_size / count:.0f} bytes a line); "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for label, args in MODES.items():
            for name, repo in checkouts.items():
                wall, cpu, rss, _ = measure(repo, [*(a.format(old_run=old_run) for a in args), "--results", str(path)])
                print(f"report {label:<34} {wall:5.2f} s wall  {cpu:5.2f} s CPU  peak RSS {rss:4.0f} MB  ({name})")


if __name__ == "__main__":
    main()
