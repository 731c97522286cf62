"""Rounds of only the cases an open finding rests on, against rounds of every case, side by side (issue 48, item 1).

A verdict's added round (verdict/sequential.py) serves the findings still open. Until 2026-11-28 it ran every case of
its step (`xla all --matrix-size 1000`: six cases of three frameworks, 9 s) where the open finding rests on one (the
matmul); this script measured what running only that case buys (it now does: `next_round`).
This script runs N rounds of one group command in two modes, alternating round by round (which goes first alternates
too), each into its own store: every case, and only the cases `--case` selects (the command's own `-k`). It prints:

- each mode's round wall time (median) and rounds a minute;
- per comparison of two frameworks on a selected case: the spread (sd) across rounds of the round's log ratio of
  their fastest samples (what the verdict judges) in each mode, and the variance a minute of every case's rounds over
  the selected cases' (higher: the selected rounds buy more evidence a minute);
- the A/A check: each selected figure's rounds of the selected-cases mode judged against the same figure's rounds of
  every case by the verdict's own test (report/compare.py's `compare`, verdict/decide.py's `decide`, 99.9 %, the
  default margin). A decided "faster" or "slower" is a false decision: pooling the two kinds of round in one figure
  would then bias it. Beside each, the ratio of the geometric means (selected over every case).

    .venv/bin/python benchmarks/case_rounds.py --rounds 6 --case matmul_1000x1000_float64 -- xla all --matrix-size 1000
"""

from __future__ import annotations

import argparse
import collections
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from turns_aa import figures, judged, outcomes  # noqa: E402  (benchmarks/: the same folder)
from turns_rounds import fastest, pair_spreads  # noqa: E402

from jax_benchmarks.cli.rounds import run_round  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--case", required=True, help="the cases of the selected rounds, as the command's -k takes them")
    parser.add_argument("command", nargs="+", help="GROUP COMMAND OPTIONS... (after --)")
    args = parser.parse_args()
    group, command, *options = args.command
    folder = Path(tempfile.mkdtemp(prefix="case-rounds-"))
    modes = {"every case": [], f"-k {args.case}": ["-k", args.case]}
    stores = {mode: folder / f"mode{i}.jsonl" for i, mode in enumerate(modes)}
    walls: dict[str, list[float]] = collections.defaultdict(list)
    print(f"{group} {command} {' '.join(options)}: {args.rounds} rounds a mode, alternating; logs in {folder}",
          flush=True)
    for index in range(args.rounds):
        for mode in (list(modes) if index % 2 == 0 else list(reversed(modes))):
            done = run_round(group, command, [*options, *modes[mode], "--results", str(stores[mode])],
                             rounds=args.rounds, index=index, run_id=f"mode-{list(modes).index(mode)}",
                             log=folder / "rounds.log")
            walls[mode].append(done.seconds)
            print(f"round {index + 1} {mode}: {done.seconds:.1f} s, exit {done.code}", flush=True)
    every, only = list(modes)
    per_minute = {mode: 60 / statistics.median(walls[mode]) for mode in modes}
    for mode in modes:
        print(f"{mode}: round {statistics.median(walls[mode]):.1f} s (median), {per_minute[mode]:.2f} rounds/min")
    spreads = {mode: pair_spreads(fastest(stores[mode])) for mode in modes}
    print(f"{'comparison':58} {'every case':>10} {'selected':>9} {'var/min ratio':>13}")
    ratios = []
    for key, selected in spreads[only].items():
        full = spreads[every].get(key)
        if full is None:
            continue
        ratio = (full ** 2 / per_minute[every]) / (selected ** 2 / per_minute[only]) if selected else math.inf
        ratios.append(ratio)
        print(f"{key:58} {full:10.3f} {selected:9.3f} {ratio:12.1f}×")
    if ratios:
        print(f"variance a minute, every case over selected: median {statistics.median(ratios):.1f}× over "
              f"{len(ratios)} comparisons (min {min(ratios):.1f}×, max {max(ratios):.1f}×)")
    only_figures, every_figures = figures(stores[only]), figures(stores[every])
    words: collections.Counter[str] = collections.Counter()
    for figure, comparison, decision in judged(only_figures, every_figures):
        words[decision.word] += 1
        ratio = (statistics.geometric_mean(r.min_s or r.median_s or math.nan for r in only_figures[figure]) /
                 statistics.geometric_mean(r.min_s or r.median_s or math.nan for r in every_figures[figure]))
        case, variant, backend = figure
        print(f"A/A {backend} {case}{' [' + variant + ']' if variant else ''}: {comparison.rounds} vs "
              f"{comparison.baseline_rounds} rounds, selected ÷ every case {ratio:.3f}: {decision.word}"
              f"{' (busy)' if decision.busy else ''}")
    print(f"A/A: {outcomes(words)}")
    print(f"ended {time.strftime('%H:%M:%S')}")


if __name__ == "__main__":
    main()
