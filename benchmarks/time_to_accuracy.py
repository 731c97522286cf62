"""Is a scale's time-to-accuracy finding answered? Runs the mnist step of `verdict --scale SCALE` as the verdict
runs it (each round a fresh process with its own seed, one run id) into a temporary store, then prints the
finding, its table, and whether every framework reached the target with at least one seed. Goal (issue 37):
answered at every scale.

    .venv/bin/python benchmarks/time_to_accuracy.py [quick|standard|full]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from jax_benchmarks.cli.relaunch import self_command  # noqa: E402
from jax_benchmarks.mnist.findings import accuracy_finding  # noqa: E402
from jax_benchmarks.store.location import as_location  # noqa: E402
from jax_benchmarks.store.record import new_run_id  # noqa: E402
from jax_benchmarks.verdict.scale import SCALES, round_argv  # noqa: E402
from jax_benchmarks.verdict.source import read_results  # noqa: E402


def load() -> str:
    return "load average " + ", ".join(f"{value:.1f}" for value in os.getloadavg())


def main(name: str) -> int:
    scale = SCALES[name]  # type: ignore[index]
    step = next(s for s in scale.steps if s.group == "mnist")
    run_id = new_run_id()
    print(f"scale {name}: {step.label}, {scale.rounds} rounds, one seed each; {load()}", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "results.jsonl"
        for index in range(scale.rounds):
            began = time.perf_counter()
            done = subprocess.run([*self_command(), *round_argv(step, scale.rounds, index, run_id, results)],
                                  capture_output=True, text=True, check=False)
            print(f"round {index + 1}/{scale.rounds} (seed {index}): exit {done.returncode}, "
                  f"{time.perf_counter() - began:.0f} s", flush=True)
            if done.returncode != 0:
                print(done.stdout[-2000:] + done.stderr[-2000:])
                return 1
        records, _ = read_results(as_location(results), print)
    finding = accuracy_finding(records)
    print(finding.sentence)
    for row in (finding.headers, *finding.rows):
        print(" | ".join(row))
    answered = finding.status == "measured" and all(not row[1].startswith("0 of") for row in finding.rows)
    print(f"answered: {'yes' if answered else 'NO'} · {load()}")
    return 0 if answered else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "quick"))
