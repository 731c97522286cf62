"""Benchmark: MNIST CNN training throughput by process count (issue 18), Flax and PyTorch.

    .venv/bin/python benchmarks/mnist_scaling.py [epochs] [max_processes] [results.jsonl]

Runs the real commands into one results file: `mnist <backend>` (1 process) and
`mnist <backend> --launch-local N` for N = 2..max_processes, then prints
`report --scaling` over them (images/s of process 0's epochs, speed-up and
scaling efficiency against the 1-process run). On one host the processes share
its cores, so efficiency measures the cost of the collectives and of splitting
the cores, not the gain of adding machines: run the same commands on a cluster
(README: "Several processes and hosts") for that.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    max_processes = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    workdir = Path(tempfile.mkdtemp(prefix="mnist_scaling_"))
    results = Path(sys.argv[3]).absolute() if len(sys.argv) > 3 else workdir / "results.jsonl"
    main_py = [sys.executable, str(REPO / "main.py")]
    for backend in ("pytorch", "flax"):
        for processes in range(1, max_processes + 1):
            launch = ["--launch-local", str(processes)] if processes > 1 else []
            cmd = [*main_py, "mnist", backend, *launch, "--num-epochs", str(epochs), "--comet", "off",
                   "--results", str(results)]
            print("$", " ".join(cmd[1:]), flush=True)
            subprocess.run(cmd, cwd=workdir, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*main_py, "report", "--scaling", "--results", str(results)], check=True)


if __name__ == "__main__":
    main()
