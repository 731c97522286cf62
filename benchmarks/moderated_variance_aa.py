"""Would borrowing the spread of a run's other figures decide more at 3 rounds, without false decisions? From stores.

At 3 rounds a side, the verdict's Welch test rests each side's spread on 2 degrees of freedom, and its 99.9 % interval
on Student's t at 2–4 degrees of freedom (8.6–31.6 standard errors wide each way): most of a standard verdict's open
comparisons are open for that. Genomics meets the same few-replicates problem with moderated variances (Smyth 2004,
limma's `squeezeVar`): every figure's variance is shrunk towards a prior fitted to all the figures' variances (a
scaled inverse chi-square with d0 degrees of freedom), and each test gains d0 degrees of freedom. Its guarantee holds
where the figures' spreads follow that prior; this measures whether the verdict's figures do, by an A/A on real
stores: for every figure with 6 rounds or more, random disjoint 3-round halves (200 draws) judged against each other
by the verdict's own rule (`decide`, 99.9 %, the default margin), once with Welch (today) and once with the
moderated variances (the prior fitted to the same draw's halves, all groups together or per group). Any "faster" or
"slower" is a false decision.

    .venv/bin/python benchmarks/moderated_variance_aa.py STORE [STORE ...]

Needs SciPy (digamma, trigamma; the `scipy` extra, in the development environment).
"""

from __future__ import annotations

import math
import random
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from scipy.optimize import brentq
from scipy.special import digamma, polygamma

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from jax_benchmarks.report.compare import Comparison, LogRatio, quiet_rounds, welch_log_ratio  # noqa: E402
from jax_benchmarks.store.jsonl import read_records  # noqa: E402
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT, decide  # noqa: E402

DRAWS = 200
HALF = 3  # rounds a side, as a standard verdict's first rounds


def trigamma(x: float) -> float:
    return float(polygamma(1, x))


def fit_prior(variances: Sequence[float], df: float) -> tuple[float, float]:
    """(d0, s0²) of the scaled inverse chi-square fitted to sample variances of `df` degrees of freedom each, by
    the method of moments on log variances (Smyth 2004, section 6.2); d0 = inf where they spread no more than
    sampling alone would."""
    e = [math.log(v) - digamma(df / 2) + math.log(df / 2) for v in variances]
    mean = statistics.fmean(e)
    excess = statistics.variance(e) - trigamma(df / 2)
    if excess <= 0:
        return math.inf, math.exp(mean)
    d0 = 2 * brentq(lambda x: trigamma(x) - excess, 1e-8, 1e8)
    return d0, math.exp(mean + digamma(d0 / 2) - math.log(d0 / 2))


def moderated_ratio(a: Sequence[float], b: Sequence[float], prior: tuple[float, float]) -> LogRatio:
    """log(a / b) of the geometric means, Welch's standard error on the moderated variances, Satterthwaite's degrees
    of freedom with each side's d0 + n - 1."""
    d0, s02 = prior
    parts = []
    for side in (a, b):
        logs = [math.log(x) for x in side]
        n, v = len(logs), statistics.variance(logs)
        moderated, df = (s02, 1e9) if math.isinf(d0) else ((d0 * s02 + (n - 1) * v) / (d0 + n - 1), d0 + n - 1)
        parts.append((statistics.fmean(logs), moderated / n, df))
    (mean_a, va, da), (mean_b, vb, db) = parts
    se2 = va + vb
    return LogRatio(mean_a - mean_b, math.sqrt(se2), se2 ** 2 / (va ** 2 / da + vb ** 2 / db))


def word(ratio: LogRatio, rounds: int) -> str:
    comparison = Comparison("aa", 1.0, 0.0, 0.0, "unchanged", "welch-rounds", None, rounds, rounds, ratio, spread=0.1)
    return decide([comparison], DEFAULT_MARGIN_PCT)[0].word


def figures(path: Path) -> dict[tuple[str, str, str, str], list[float]]:
    """The store's most recorded run: per timed figure, its quiet rounds' fastest samples, rounds in order."""
    records = list(read_records(path, lambda message: None))
    run = Counter(r.run_id for r in records).most_common(1)[0][0]
    per_figure = defaultdict(list)
    for record in records:
        if record.run_id == run and record.median_s:
            per_figure[(record.group, record.backend, record.variant or "", record.case)].append(record)
    out = {}
    for key, recs in per_figure.items():
        by_round = {r.round_index: (r.min_s or r.median_s) for r in quiet_rounds(recs)}
        out[key] = [by_round[i] for i in sorted(by_round, key=lambda i: -1 if i is None else i)]
    return out


def main(paths: Sequence[str]) -> None:
    rng = random.Random(0)
    for path in map(Path, paths):
        figs = {k: v for k, v in figures(path).items() if len(v) >= 2 * HALF}
        counts: dict[str, Counter[str]] = {"welch": Counter(), "moderated": Counter(), "moderated per group": Counter()}
        priors = []
        for _ in range(DRAWS):
            halves = {}
            for key, rounds in figs.items():
                order = rng.sample(range(len(rounds)), 2 * HALF)
                halves[key] = ([rounds[i] for i in order[:HALF]], [rounds[i] for i in order[HALF:]])
            def spread(keys: Sequence[tuple[str, str, str, str]]) -> list[float]:
                return [v for k in keys for side in halves[k] if (v := statistics.variance([math.log(x) for x in side])) > 0]
            every = fit_prior(spread(list(halves)), HALF - 1)
            priors.append(every[0])
            by_group = {g: fit_prior(spread([k for k in halves if k[0] == g]), HALF - 1) for g in {k[0] for k in halves}}
            for key, (a, b) in halves.items():
                counts["welch"][word(welch_log_ratio(a, b), HALF)] += 1
                counts["moderated"][word(moderated_ratio(a, b, every), HALF)] += 1
                counts["moderated per group"][word(moderated_ratio(a, b, by_group[key[0]]), HALF)] += 1
        print(f"== {path}: {len(figs)} figures with {2 * HALF}+ quiet rounds; {DRAWS} draws of {HALF} against {HALF}; "
              f"prior degrees of freedom d0 {statistics.median(priors):.1f} (median over draws)")
        for name, count in counts.items():
            total, false = sum(count.values()), count["faster"] + count["slower"]
            print(f"  {name:20} {total} comparisons: {false} called faster or slower ({false / total:.2%}), "
                  f"{count['same']} the same, {count['undecided']} undecided")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
