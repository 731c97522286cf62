"""Benchmark: MNIST CNN training throughput by process count, Flax and PyTorch.

    .venv/bin/python benchmarks/mnist_scaling.py [epochs] [max_processes] [rounds]

Runs the real commands, `mnist <backend>` (1 process) and `mnist <backend>
--launch-local N` for N = 2..max_processes, in interleaved rounds (each round
its own results file, so machine noise hits every configuration alike), and
prints `report --scaling` for each round (images/s of process 0's epochs,
speed-up and scaling efficiency against that round's 1-process run). On one host the processes share
its cores, so efficiency measures the cost of the collectives and of splitting
the cores, not the gain of adding machines: run the same commands on a cluster
(README: "Several processes and hosts") for that.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    max_processes = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    workdir = Path(tempfile.mkdtemp(prefix="mnist_scaling_"))
    main_py = [sys.executable, str(REPO / "main.py")]
    for round_ in range(1, rounds + 1):
        results = workdir / f"round{round_}.jsonl"
        print(f"round {round_}: load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
        for backend in ("pytorch", "flax"):
            for processes in range(1, max_processes + 1):
                launch = ["--launch-local", str(processes)] if processes > 1 else []
                cmd = [*main_py, "mnist", backend, *launch, "--num-epochs", str(epochs), "--comet", "off",
                       "--results", str(results)]
                print("$", " ".join(cmd[1:]), flush=True)
                subprocess.run(cmd, cwd=workdir, check=True, stdout=subprocess.DEVNULL)
        print(f"round {round_}: python main.py report --scaling --markdown --results {results}", flush=True)
        subprocess.run([*main_py, "report", "--scaling", "--markdown", "--results", str(results)], check=True)


if __name__ == "__main__":
    main()
