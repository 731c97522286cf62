"""Goal (issue 52): `mnist pytorch --compile` trains the CNN to the same accuracy as eager, within 0.5 points on each
of 3 seeds (embedded data, 5 epochs), and records both its compile time and its step time.

    .venv/bin/python benchmarks/compiled_accuracy.py [seeds] [epochs] [extra mnist options...]

e.g. `benchmarks/compiled_accuracy.py 3 5` (the goal: about 3 × (eager + compiled) training runs of 5 epochs on
4,000 embedded digits: tens of minutes on a 2-core CPU) or a reduced `benchmarks/compiled_accuracy.py 1 1
--dry-run`. Each run is the real command in its own process (`--precision` and other options pass through); the
script prints, per seed, the final test accuracy of both modes, their gap, the compiled run's compile time, its
compilations and graph breaks, and each mode's step time, then whether every gap is within the tolerance.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
TOLERANCE_POINTS = 0.5


def train(seed: int, epochs: int, extra: list[str], compiled: bool, folder: Path) -> list[dict[str, Any]]:
    """One `mnist pytorch` run's records (eager, or --compile)."""
    results = folder / f"seed{seed}_{'compile' if compiled else 'eager'}.jsonl"
    cmd = [sys.executable, str(REPO / "main.py"), "mnist", "pytorch", "--data-source", "embedded", "--epochs",
           str(epochs), "--seed", str(seed), "--comet", "off", "-k", "train_step,train_epoch,validation",
           "--results", str(results), *(["--compile"] if compiled else []), *extra]
    done = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd[1:])} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    step = next(r for r in records if r["case"].startswith("train_step_"))
    validations = [r for r in records if r["case"].startswith("validation_")]
    last = max(validations, key=lambda r: r["params"]["epoch"])
    return {"accuracy": last["metrics"]["accuracy"], "step_s": step["median_s"], "compile_s": step.get("compile_s"),
            "compilations": step["metrics"].get("compilations"), "graph_breaks": step["metrics"].get("graph_breaks")}


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    extra = sys.argv[3:]
    print(f"mnist pytorch, embedded data, {epochs} epoch(s), seeds 0-{seeds - 1}, options {' '.join(extra) or '-'}")
    print(f"{'seed':>4}  {'eager acc':>9}  {'compiled acc':>12}  {'gap (points)':>12}  {'compile':>8}  "
          f"{'compilations':>12}  {'breaks':>6}  {'eager step':>10}  {'compiled step':>13}")
    gaps = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(seeds):
            eager = summary(train(seed, epochs, extra, False, Path(tmp)))
            compiled = summary(train(seed, epochs, extra, True, Path(tmp)))
            gap = (compiled["accuracy"] - eager["accuracy"]) * 100
            gaps.append(gap)
            print(f"{seed:>4}  {eager['accuracy']:>9.2%}  {compiled['accuracy']:>12.2%}  {gap:>+12.2f}  "
                  f"{compiled['compile_s']:>7.1f}s  {compiled['compilations']:>12}  {compiled['graph_breaks']:>6}  "
                  f"{eager['step_s'] * 1e3:>8.1f}ms  {compiled['step_s'] * 1e3:>11.1f}ms", flush=True)
    within = all(abs(g) <= TOLERANCE_POINTS for g in gaps)
    print(f"every seed within {TOLERANCE_POINTS} points of eager: {'yes' if within else 'no'} "
          f"(largest gap {max(gaps, key=abs):+.2f} points)")


if __name__ == "__main__":
    main()
