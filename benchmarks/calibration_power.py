"""Benchmark: the regression gate's A/A calibration on this machine, and how often it catches a 1.5× slowdown
(goals of issue 35).

    .venv/bin/python benchmarks/calibration_power.py [ROUNDS] [TRIALS] [THRESHOLD_PCT] [MIN_TIME_S]

1. Measured: `calibrate xla:numpy --options '--matrix-size 64 --no-memory' --rounds ROUNDS
   --fail-on-regression THRESHOLD_PCT` (default 10 rounds, 10 %; with MIN_TIME_S, `--min-time MIN_TIME_S`
   among the options: each figure samples that long a round) in a fresh store: what it prints, per
   figure (the false-alarm rate of unchanged code and the smallest slowdown detected; rounds taken on a
   busy machine are left out, as the gate leaves them out).
2. Synthetic, from injected timings (not a slowed build): each figure's measured per-round fastest samples
   are drawn with replacement into runs of ROUNDS values: per trial a run A, a run A' (unchanged) and a
   run B = A'-like values × 1.5. The gate's test of one figure (Welch on the logs, `p_beyond` the threshold
   at α 0.05, the figure judged alone) is applied to A'/A (a "slower" or "faster" is a false alarm) and to
   B/A' (a "slower" is a catch). Where fewer than 6 rounds were quiet, every round is drawn from, busy ones
   included, and the line says so: the gate itself would not judge such figures.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from jax_benchmarks.report.compare import ALPHA, MIN_ROUNDS, quiet_rounds, round_fastest, welch_log_ratio
from jax_benchmarks.store.record import Record

SLOWDOWN = 1.5


def calibrate(rounds: int, threshold: float, results: Path, min_time: str | None) -> None:
    options = "--matrix-size 64 --no-memory" + (f" --min-time {min_time}" if min_time is not None else "")
    command = [sys.executable, "main.py", "calibrate", "xla:numpy", "--options", options,
               "--rounds", str(rounds), "--fail-on-regression", f"{threshold:g}", "--results", str(results)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    print(f"# measured: python main.py calibrate xla:numpy --options '{options}' --rounds {rounds} "
          f"--fail-on-regression {threshold:g}  (exit {done.returncode})")
    print(done.stdout.rstrip())
    last = [line for line in done.stderr.splitlines() if line.startswith("calibration run")]
    print(last[-1] if last else done.stderr.rstrip()[-400:])


def trials(values: list[float], rounds: int, count: int, threshold: float, rng: random.Random) -> tuple[int, int]:
    """(false alarms on A'/A, catches on B/A') over `count` trials of runs drawn from `values`."""
    alarms = catches = 0
    for _ in range(count):
        a, a2 = rng.choices(values, k=rounds), rng.choices(values, k=rounds)
        b = [v * SLOWDOWN for v in rng.choices(values, k=rounds)]
        alarms += welch_log_ratio(a2, a).p_beyond(threshold) <= ALPHA
        slower = welch_log_ratio(b, a2)
        catches += slower.value > 0 and slower.p_beyond(threshold) <= ALPHA
    return alarms, catches


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    threshold = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
    min_time = sys.argv[4] if len(sys.argv) > 4 else None
    print(f"# load average before: {os.getloadavg()[0]:.2f}, {len(os.sched_getaffinity(0))} cores")
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results.jsonl"
        calibrate(rounds, threshold, results, min_time)
        figures: dict[str, list[Record]] = defaultdict(list)
        for line in results.read_text().splitlines():
            record = Record.model_validate(json.loads(line))
            if record.median_s:
                figures[f"{record.case} {record.backend}"].append(record)
    print(f"# load average after the calibration: {os.getloadavg()[0]:.2f}")
    print(f"# synthetic: {count} trials of {rounds} rounds a side drawn from each figure's measured rounds, B = "
          f"{SLOWDOWN}× (injected timings), threshold {threshold:g} %, α {ALPHA:g}, each figure judged alone")
    rng = random.Random(0)
    for name, records in figures.items():
        quiet = round_fastest(quiet_rounds(records))
        drawn = quiet if len(quiet) >= 2 * MIN_ROUNDS else round_fastest(records)
        source = (f"{len(quiet)} quiet rounds" if drawn is quiet
                  else f"all {len(drawn)} rounds, {len(drawn) - len(quiet)} of them busy (the gate would not judge)")
        alarms, catches = trials(drawn, rounds, count, threshold, rng)
        print(f"{name}: A/A false alarms {alarms}/{count}; 1.5x slowdown caught {catches}/{count} (from {source})")


if __name__ == "__main__":
    main()
