"""The verdict's A/A guard, simulated: how often is the same framework called faster than itself?

Goal (issue 48, item 4): never. Per noise level (the spread of a figure's rounds between processes, log-normal) and
rounds a side, TRIALS pairs of two sides drawn from one distribution are judged by the verdict's own rule
(`verdict/decide.py`: `decide`, one comparison a family, at --margin) and, for the levels it could use instead, by
the rule on the interval alone (the four outcomes of the module's docstring at 95 %, 99 % and 99.9 %). Printed: the
share of pairs called "faster"/"slower" by more than the margin (beyond) and "faster, by a–b %" (by).

    .venv/bin/python benchmarks/verdict_aa.py [--trials 2000] [--margin 10]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from jax_benchmarks.report.compare import Comparison, pooled_spread, welch_log_ratio  # noqa: E402
from jax_benchmarks.report.student_t import t_quantile  # noqa: E402
from jax_benchmarks.verdict.decide import DECISION_CONFIDENCE, decide  # noqa: E402

NOISE = (0.01, 0.05, 0.1, 0.2)
ROUNDS = (3, 6, 10)
LEVELS = (0.95, 0.99, 0.999)


def outcome(a: list[float], b: list[float], level: float, margin_pct: float) -> str:
    """'beyond', 'by' or '' (the same or undecided) by the interval at `level` alone."""
    ratio = welch_log_ratio(a, b)
    half = t_quantile(0.5 + level / 2, ratio.df) * ratio.se
    low, high, edge = ratio.value - half, ratio.value + half, math.log1p(margin_pct / 100)
    if low > edge or high < -edge:
        return "beyond"
    if (low > 0 or high < 0) and (high > edge or low < -edge):
        return "by"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--margin", type=float, default=10.0)
    args = parser.parse_args()
    print(f"A/A pairs, {args.trials} a cell, margin ±{args.margin:g} %: share called beyond the margin / faster by "
          f"a–b %; the verdict's rule at {DECISION_CONFIDENCE * 100:g} % (decide) last")
    print("noise  rounds  " + "  ".join(f"{level * 100:g} %".rjust(13) for level in LEVELS) + "  decide".rjust(15))
    for noise in NOISE:
        for rounds in ROUNDS:
            rng = random.Random(int(noise * 1000) * 100 + rounds)
            counts = {level: {"beyond": 0, "by": 0, "": 0} for level in LEVELS}
            called = 0
            for _ in range(args.trials):
                a = [math.exp(rng.gauss(0, noise)) for _ in range(rounds)]
                b = [math.exp(rng.gauss(0, noise)) for _ in range(rounds)]
                for level in LEVELS:
                    counts[level][outcome(a, b, level, args.margin)] += 1
                comparison = Comparison("aa", 1.0, 0.0, 0.0, "unchanged", "welch-rounds", None, rounds, rounds,
                                        welch_log_ratio(a, b), spread=pooled_spread(a, b))
                called += decide([comparison], args.margin)[0].word in ("faster", "slower")
            cells = "  ".join(f"{counts[lv]['beyond'] / args.trials:6.2%}/{counts[lv]['by'] / args.trials:6.2%}"
                              for lv in LEVELS)
            print(f"{noise:5.0%}  {rounds:6d}  {cells}  {called / args.trials:13.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
