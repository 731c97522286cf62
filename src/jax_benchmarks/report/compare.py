"""Is a figure faster, slower or unchanged against a baseline, given the noise *between runs*?

The unit of replication is a run, not a sample. Within one process the samples
of a figure are tight, but the next process on a shared machine can be a few
percent off for reasons no code change explains (load, frequency, memory
layout); a test on within-run samples calls that drift "significant". So the
verdict uses one value per round (`--rounds N`: N fresh processes, one run id):
the fastest sample of each round (`min_s`).

Why the fastest and not the median: other work on the machine only ever *adds*
time to a sample (it takes the core, the caches, the memory bandwidth), so the
fastest sample of a round is the one least disturbed by it, while a code change
that does more work makes every sample slower, the fastest included. Measured
here (2 cores shared by six engineers, load 10, `xla numpy --matrix-size 512`
twice, nothing changed): every round median of the 0.1 ms `mean` figure rose
×1–×5 from one run to the next and Welch on the medians called it 134 % slower;
the fastest sample of all twenty rounds was 0.09 ms in both runs. (Chen and
Revels, "Robust benchmarking in noisy environments", 2016, make the same
argument; `timeit`'s documentation too.)

* Effect: the ratio of the geometric means of the rounds' fastest samples,
  current over baseline. Its 95 % confidence interval comes from Welch's t on
  their logs (Welch does not assume equal spread in the two runs).
* Verdict with a threshold T (the PCT of --fail-on-regression, else 0):
  "slower" when the data show the ratio is above 1 + T, "faster" when it is
  below 1 / (1 + T), each with a one-sided Welch test; "unchanged" otherwise.
  So a regression is flagged only where the slowdown is both statistically
  clear and larger than PCT.
* Many figures at once: the p-values of all compared figures form one family,
  and Benjamini–Hochberg keeps the expected share of false alarms among the
  flagged figures at ALPHA.
* Two figures of the same run whose rounds were taken in turns (`verdict --turns`: each framework in its own
  process, one timed window at a time, jax_benchmarks.measure.turns; their records' env `turns`) are judged as
  pairs: a round's two figures were timed a fraction of a second apart, on the same machine speed, so the drift
  between rounds is common to both and cancels in the round's log ratio. The effect is the mean of those per-round
  log ratios, its interval from Student's t on them (n - 1 degrees of freedom, n the rounds both took in turns;
  `paired_log_ratio`); rounds only one side took in turns are left out. Fewer than MIN_PAIRED_ROUNDS such rounds:
  Welch over all the rounds, as for any other two figures (see MIN_PAIRED_ROUNDS for why).
* Fewer than MIN_ROUNDS rounds on either side: the variance between runs
  cannot be estimated (one round) or rests on one degree of freedom (two),
  so the verdict is "too few samples", never a silent "unchanged".
* A figure taken on a busy machine on either side (other processes held the
  cores: src/jax_benchmarks/measure/contention.py) is not judged: the verdict
  is "busy machine", with what was busy, never a claimed difference.
* "unchanged" is not "the same": it says the change was not significant, with
  the smallest change that the rounds' variance would have let the gate
  detect (`detectable_pct`: at ALPHA two-sided and POWER, from Welch's
  standard error), like asv's "not significantly changed" with its interval.
  `rounds_needed` turns a figure's spread between rounds into the rounds a
  side that a given threshold needs on this machine.

What a table shows next to the verdict stays the typical time: the median of
the round medians, and their interquartile range.
"""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from jax_benchmarks.measure.contention import of_fields
from jax_benchmarks.store.record import Record
from jax_benchmarks.report.student_t import t_quantile, t_sf

Verdict = Literal["faster", "slower", "unchanged", "too few samples", "busy machine"]
Method = Literal["welch-rounds", "paired-rounds", "too-few-rounds"]

ALPHA = 0.05
CONFIDENCE = 0.95
MIN_ROUNDS = 3
# The fewest rounds taken in turns by both figures that are judged as pairs; with fewer, Welch. A paired test over n
# rounds has n - 1 degrees of freedom where Welch's has about 2n - 2, and at the verdict's 99.9 % that costs more than
# the lower spread gains until n = 5: measured, the rounds' log ratios spread 0.07 in turns against 0.13 between
# one-process rounds (benchmarks/turns_rounds.py, docs/verdict.md), and the half-width of the 99.9 % interval is then
# 0.47 paired against 0.39 Welch at 4 rounds, 0.28 against 0.29 at 5, 0.20 against 0.24 at 6. Fixed in advance,
# never chosen from the data: picking whichever test gives the narrower interval would call differences that are not
# there.
MIN_PAIRED_ROUNDS = 5
# The chance that a real change of the detectable size is flagged (the usual 80 % of power analysis).
POWER = 0.8
MAX_ROUNDS_NEEDED = 1000


@dataclass(frozen=True)
class LogRatio:
    """log(current / baseline) of the geometric means of the rounds' fastest samples, with Welch's standard error."""

    value: float
    se: float
    df: float

    def interval(self, confidence: float = CONFIDENCE) -> tuple[float, float]:
        """Confidence interval of the ratio (not its log)."""
        if self.se == 0:
            return math.exp(self.value), math.exp(self.value)
        half = t_quantile(0.5 + confidence / 2, self.df) * self.se
        return math.exp(self.value - half), math.exp(self.value + half)

    def p_above(self, log_bound: float) -> float:
        """One-sided p-value of 'the log ratio is at most log_bound' (small: clearly above it)."""
        if self.se == 0:
            return 0.0 if self.value > log_bound else 1.0
        return t_sf((self.value - log_bound) / self.se, self.df)

    def p_beyond(self, threshold_pct: float) -> float:
        """Two-sided p-value of 'the ratio lies within [1/(1+T), 1+T]' (T=0: 'the ratio is 1')."""
        bound = math.log1p(threshold_pct / 100)
        slower = self.p_above(bound)
        faster = LogRatio(-self.value, self.se, self.df).p_above(bound)
        return min(1.0, 2 * min(slower, faster))


@dataclass(frozen=True)
class Comparison:
    baseline_run_id: str
    baseline_median_s: float  # median of the baseline's round medians
    baseline_iqr_s: float
    change_pct: float  # + slower, - faster: the judged ratio (fastest samples) when judged, else of the medians
    verdict: Verdict
    method: Method
    p_value: float | None  # Benjamini–Hochberg adjusted (q-value) over the figures judged together
    rounds: int = 1
    baseline_rounds: int = 1
    log_ratio: LogRatio | None = None
    threshold_pct: float = 0.0
    median_s: float | None = None  # median of the current run's round medians
    iqr_s: float | None = None
    # Why the figure was not judged although it has the rounds: taken on a busy machine (either side).
    busy: str | None = None
    # The spread of the logs of the rounds' fastest samples, both runs pooled (`pooled_spread`).
    spread: float | None = None
    # Rounds taken on a busy machine, left out of the judgement (enough quiet rounds remained).
    busy_rounds_left_out: int = 0
    # Judged as pairs of rounds taken in turns (`paired_log_ratio`): `spread` is then the spread of the rounds' log
    # ratios, and `rounds` and `baseline_rounds` count the pairs.
    paired: bool = False
    # Rounds of either side left out of the pairs (not taken in turns by both sides).
    unpaired_rounds_left_out: int = 0
    # Judged by Welch, but with 2 to MIN_PAIRED_ROUNDS - 1 rounds both sides took in turns in one run: the spread of
    # those rounds' log ratios, from which the rounds that would decide it are forecast as pairs (the test that will
    # judge them once there are MIN_PAIRED_ROUNDS: verdict/decide.py's `forecast`); None otherwise.
    pairs_spread: float | None = None

    @property
    def detectable_pct(self) -> float | None:
        """The smallest slowdown (in %) this comparison flags with probability POWER at ALPHA, two-sided, given
        its rounds' variance: (1 + T) · exp((t(1 - α/2) + t(POWER)) · se) - 1, T its threshold; None untested.
        (Judged in a family, Benjamini–Hochberg can ask a little more of each figure.)"""
        if self.log_ratio is None:
            return None
        margin = detectable_log(self.log_ratio.se, self.log_ratio.df)  # the test's own se and df, paired or not
        return math.expm1(math.log1p(self.threshold_pct / 100) + margin) * 100

    @property
    def interval(self) -> tuple[float, float] | None:
        return self.log_ratio.interval() if self.log_ratio is not None else None

    @property
    def test_text(self) -> str:
        """How the verdict was reached, for humans: rounds, CI of the ratio, adjusted p."""
        counts = (f"{self.rounds} paired round(s)" if self.paired
                  else f"{self.rounds} vs {self.baseline_rounds} round(s)")
        if self.busy is not None:
            return f"not judged: taken on a busy machine ({self.busy}); measure again on a quiet one"
        if self.log_ratio is None:
            return f"too few samples: {counts}, needs {MIN_ROUNDS}+ each (--rounds)"
        low, high = self.log_ratio.interval()
        q = "" if self.p_value is None else f", BH q={self.p_value:.2g}"
        text = f"{counts}, fastest-sample ratio 95 % CI {low:.3g}–{high:.3g}{q}"
        if self.busy_rounds_left_out:
            text += f" ({self.busy_rounds_left_out} round(s) taken on a busy machine left out)"
        if self.verdict == "unchanged" and (detectable := self.detectable_pct) is not None:
            text += (f"; not significantly changed: these rounds detect a slowdown of {detectable:.3g} % or more "
                     f"(α {ALPHA:g}, power {POWER:.0%})")
        return text

    @property
    def change_text(self) -> str:
        """The change as a table shows it: a point where the verdict claims one, the 95 % interval of the
        change where it does not ('-3.1 % … +2.0 %': never '-95.1 %' beside 'unchanged'), none where the
        figure was taken on a busy machine."""
        if self.busy is not None:
            return "—"
        if self.verdict == "unchanged" and self.log_ratio is not None:
            low, high = self.log_ratio.interval()
            return f"{(low - 1) * 100:+.1f} % … {(high - 1) * 100:+.1f} %"
        return f"{self.change_pct:+.1f} %"



def round_medians(records: Sequence[Record]) -> list[float]:
    """One median per round of a figure (what a table shows)."""
    return _per_round(records, lambda record: record.median_s)


def round_fastest(records: Sequence[Record]) -> list[float]:
    """The fastest sample of each round of a figure (what the verdict judges); a record without it: its median."""
    return _per_round(records, _fastest)


def _fastest(record: Record) -> float | None:
    return record.min_s or record.median_s


def _per_round(records: Sequence[Record], value: Callable[[Record], float | None]) -> list[float]:
    """One value per round, rounds in order (a later record of the same round wins; no round index: one round)."""
    per_round = _by_round(records, value)
    return [per_round[key] for key in sorted(per_round, key=lambda k: -1 if k is None else k)]


def _by_round(records: Sequence[Record], value: Callable[[Record], float | None]) -> dict[int | None, float]:
    """One value per round index of the timed records (a later record of the same round wins)."""
    per_round: dict[int | None, float] = {}
    for record in records:
        if record.median_s and (number := value(record)):
            per_round[record.round_index] = number
    return per_round


def detectable_log(se: float, df: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest log ratio a two-sided Welch test at `alpha` detects with probability `power`."""
    return (t_quantile(1 - alpha / 2, df) + t_quantile(power, df)) * se


def pooled_spread(current: Sequence[float], baseline: Sequence[float]) -> float:
    """The standard deviation of the logs of a figure's per-round values between rounds, both runs pooled
    (each about its own mean: a change between the runs is not spread); two or more values a side."""
    logs = [[math.log(v) for v in side] for side in (current, baseline)]
    squares = sum((x - statistics.fmean(side)) ** 2 for side in logs for x in side)
    return math.sqrt(squares / (len(current) + len(baseline) - 2))


def rounds_needed(spread: float, change_pct: float, alpha: float = ALPHA, power: float = POWER,
                  most: int = MAX_ROUNDS_NEEDED, paired: bool = False) -> int | None:
    """The rounds a side with which a change of `change_pct` is detected (at `alpha`, with `power`) for a
    figure whose logs spread by `spread` between rounds; None: not within `most` rounds (or a 0 % change).
    `paired`: rounds taken in turns, `spread` the spread of the rounds' log ratios (`paired_log_ratio`: standard
    error spread / √n, n - 1 degrees of freedom) instead of each side's (Welch: spread · √(2/n), 2n - 2)."""
    if change_pct <= 0:
        return None
    target = math.log1p(change_pct / 100)
    def detects(n: int) -> bool:
        if paired:
            return detectable_log(spread / math.sqrt(n), n - 1, alpha, power) <= target
        return detectable_log(spread * math.sqrt(2 / n), 2 * n - 2, alpha, power) <= target

    # The detectable change shrinks as rounds are added (a smaller standard error, more degrees of freedom): the
    # fewest rounds that detect `target` are found by bisection.
    if not detects(most):
        return None
    low, high = MIN_ROUNDS, most
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if detects(middle) else (middle + 1, high)
    return low


def welch_log_ratio(current: Sequence[float], baseline: Sequence[float]) -> LogRatio:
    """Welch's estimate of log(current / baseline) from at least two positive values on each side."""
    log_c, log_b = [math.log(x) for x in current], [math.log(x) for x in baseline]
    var_c, var_b = statistics.variance(log_c) / len(log_c), statistics.variance(log_b) / len(log_b)
    se = math.sqrt(var_c + var_b)
    denominator = var_c**2 / (len(log_c) - 1) + var_b**2 / (len(log_b) - 1)
    df = (var_c + var_b) ** 2 / denominator if denominator > 0 else float(len(log_c) + len(log_b) - 2)
    return LogRatio(statistics.fmean(log_c) - statistics.fmean(log_b), se, df)


def paired_log_ratio(logs: Sequence[float]) -> LogRatio:
    """log(current / baseline) from the log ratios of rounds taken in turns (`turn_pairs`): their mean, its standard
    error from their spread, n - 1 degrees of freedom; at least two rounds."""
    return LogRatio(statistics.fmean(logs), statistics.stdev(logs) / math.sqrt(len(logs)), float(len(logs) - 1))


def turn_pairs(current: Sequence[Record], baseline: Sequence[Record]) -> list[float]:
    """log(current's fastest sample / baseline's) of each round both figures took in turns in one run (records' env
    `turns`), rounds in order; none where the figures are of different runs. `compare` judges them as pairs from
    MIN_PAIRED_ROUNDS on, and by Welch below."""
    if len({record.run_id for record in (*current, *baseline)}) != 1:
        return []
    mine, theirs = (_by_round([record for record in side if record.env.get("turns") is True], _fastest)
                    for side in (current, baseline))
    common = sorted(index for index in set(mine) & set(theirs) if index is not None)
    return [math.log(mine[i]) - math.log(theirs[i]) for i in common]


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Adjusted p-values (q-values): reject where q ≤ α to keep the false discovery rate at α."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):  # step-up: from the largest p-value down
        i = order[rank - 1]
        running = min(running, p_values[i] * m / rank)
        adjusted[i] = min(running, 1.0)
    return adjusted


def busy_sentence(records: Sequence[Record]) -> str | None:
    """What was busy when the first of these records marked busy was taken, else None."""
    for record in records:
        seen = of_fields(record.contention)
        if seen is not None and seen.busy:
            return seen.sentence()
    return None


def quiet_rounds(records: Sequence[Record]) -> list[Record]:
    """The records of the rounds in which no record of the figure was taken on a busy machine."""
    busy = {record.round_index for record in records if busy_sentence([record]) is not None}
    return [record for record in records if record.round_index not in busy]


def compare(current: Sequence[Record], baseline: Sequence[Record]) -> Comparison | None:
    """The change of one figure (all its round records) against the baseline's; None when untimed.

    The verdict here treats the figure as a family of one; `judge` decides a
    whole report's figures together. Rounds taken on a busy machine are left out where MIN_ROUNDS quiet
    rounds remain on each side; otherwise the figure is not judged (`busy`)."""
    busy = busy_sentence(current) or busy_sentence(baseline)
    left_out = 0
    if busy is not None:
        quiet_now, quiet_base = quiet_rounds(current), quiet_rounds(baseline)
        if len(round_medians(quiet_now)) >= MIN_ROUNDS and len(round_medians(quiet_base)) >= MIN_ROUNDS:
            left_out = len(round_medians(current)) + len(round_medians(baseline)) - (
                len(round_medians(quiet_now)) + len(round_medians(quiet_base)))
            current, baseline, busy = quiet_now, quiet_base, None
    now, base = round_medians(current), round_medians(baseline)
    if not now or not base:
        return None
    base_record = baseline[-1]
    base_median = statistics.median(base)
    iqr = _iqr(base) if len(base) > 1 else (base_record.iqr_s or 0.0)
    log_ratio = None
    spread = None
    in_turns = turn_pairs(current, baseline)
    pairs = in_turns if len(in_turns) >= MIN_PAIRED_ROUNDS else None
    if pairs is not None:
        log_ratio = paired_log_ratio(pairs)
        spread = statistics.stdev(pairs)
        change = math.expm1(log_ratio.value) * 100
    elif len(now) >= MIN_ROUNDS and len(base) >= MIN_ROUNDS:
        log_ratio = welch_log_ratio(round_fastest(current), round_fastest(baseline))
        spread = pooled_spread(round_fastest(current), round_fastest(baseline))
        change = math.expm1(log_ratio.value) * 100
    else:
        change = (statistics.median(now) - base_median) / base_median * 100
    comparison = Comparison(
        baseline_run_id=base_record.run_id, baseline_median_s=base_median, baseline_iqr_s=iqr,
        change_pct=change, verdict="too few samples",
        method="paired-rounds" if pairs is not None else "welch-rounds" if log_ratio is not None else "too-few-rounds",
        p_value=None, rounds=len(now) if pairs is None else len(pairs),
        baseline_rounds=len(base) if pairs is None else len(pairs), log_ratio=log_ratio,
        median_s=statistics.median(now), iqr_s=_iqr(now) if len(now) > 1 else (current[-1].iqr_s or 0.0),
        busy=busy, spread=spread, busy_rounds_left_out=left_out, paired=pairs is not None,
        unpaired_rounds_left_out=0 if pairs is None else len(now) + len(base) - 2 * len(pairs),
        pairs_spread=(statistics.stdev(in_turns) if pairs is None and len(in_turns) >= 2 and log_ratio is not None
                      else None),
    )
    return judge([comparison], 0.0)[0]


def judge(comparisons: Sequence[Comparison], threshold_pct: float) -> list[Comparison]:
    """Verdicts for figures judged together: beyond ±threshold_pct, clearly, with BH over the family."""
    testable = [i for i, c in enumerate(comparisons) if c.log_ratio is not None and c.busy is None]
    raw = [_p_beyond(comparisons[i], threshold_pct) for i in testable]
    q_values = dict(zip(testable, benjamini_hochberg(raw), strict=True))
    judged = []
    for i, comparison in enumerate(comparisons):
        if i not in q_values:
            verdict_: Verdict = "busy machine" if comparison.busy is not None else "too few samples"
            judged.append(replace(comparison, verdict=verdict_, p_value=None, threshold_pct=threshold_pct))
            continue
        q = q_values[i]
        verdict: Verdict = "unchanged"
        if q <= ALPHA:
            verdict = "slower" if comparison.change_pct > 0 else "faster"
        judged.append(replace(comparison, verdict=verdict, p_value=q, threshold_pct=threshold_pct))
    return judged


def _p_beyond(comparison: Comparison, threshold_pct: float) -> float:
    assert comparison.log_ratio is not None
    return comparison.log_ratio.p_beyond(threshold_pct)


def is_regression(comparison: Comparison | None) -> bool:
    """Judged slower: beyond the threshold it was judged with, clearly, after the family's correction."""
    return comparison is not None and comparison.verdict == "slower"


def _iqr(values: Sequence[float]) -> float:
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q3 - q1


# -------------------------------------------------------- calibration ---
CALIBRATION_SPLITS = 200  # A/A splits drawn per figure (all of them where there are fewer)


@dataclass(frozen=True)
class Calibration:
    """What the gate does on this machine for one figure, from its own rounds split A/A."""

    rounds: int  # the figure's quiet rounds, split in two halves of rounds // 2
    splits: int
    false_alarms: int  # splits the gate called slower or faster at the threshold
    detectable_pct: float  # the smallest slowdown half the rounds detect (α, power), at the threshold
    spread: float = 0.0  # the standard deviation of the logs of the rounds' fastest samples (`pooled_spread`)

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / self.splits


def calibrate(records: Sequence[Record], threshold_pct: float, seed: int = 0) -> Calibration | None:
    """Split a figure's rounds (busy ones left out) into two halves many ways, as if they were two runs of
    unchanged code (A/A), and count how often the gate calls a change at `threshold_pct`; None with
    fewer than 2 · MIN_ROUNDS quiet rounds. Judged alone, without the family's correction (stricter than
    the gate on many figures)."""
    values = round_fastest(quiet_rounds(records))
    half = len(values) // 2
    if half < MIN_ROUNDS:
        return None
    indices = range(len(values))
    every = list(itertools.combinations(indices, half))
    chosen = every if len(every) <= CALIBRATION_SPLITS else random.Random(seed).sample(every, CALIBRATION_SPLITS)
    alarms = 0
    for a_side in chosen:
        rest = [values[i] for i in indices if i not in a_side][:half]
        if welch_log_ratio([values[i] for i in a_side], rest).p_beyond(threshold_pct) <= ALPHA:
            alarms += 1
    spread = pooled_spread(values[:half], values[half:2 * half])
    margin = detectable_log(spread * math.sqrt(2 / half), 2 * half - 2)
    return Calibration(len(values), len(chosen), alarms, math.expm1(math.log1p(threshold_pct / 100) + margin) * 100,
                       spread)


def resolvable_pct(spread: float, rounds: int) -> float:
    """The smallest change (in %) the gate resolves, at ALPHA two-sided with POWER, with `rounds` rounds a side of
    a figure whose logs spread by `spread` between rounds (at a 0 % threshold; `rounds` ≥ 2)."""
    return math.expm1(detectable_log(spread * math.sqrt(2 / rounds), 2 * rounds - 2)) * 100
