"""Four honest outcomes for a comparison of two figures, each stated with its interval (`DECISION_CONFIDENCE`):

* **faster by more than m** (or slower): the ratio's interval lies beyond the margin ±m (beyond 1 + m, or below
  1 / (1 + m));
* **the same within ±m %**: the interval lies inside the margin (an equivalence test); where the interval also
  excludes 1, the difference it shows is named beside it ("2–4 %");
* **faster, by a–b %** (or slower): the interval excludes 1 and crosses the margin, a real difference of uncertain
  size;
* **undecided**: the interval holds 1 and crosses the margin (or the comparison was not tested: too few rounds,
  a busy machine, an interval wider than `WIDEST_INTERVAL`), naming the rounds a side that would decide it.

The first three are decided (`Decision.decided`): one predicate, the page's count and the sequential rounds'
stopping rule both rest on it (through the findings' status, verdict/sequential.py).

Built on the regression gate's test (`jax_benchmarks.report.compare`): the log of the ratio of the geometric
means of the rounds' fastest samples, with Welch's standard error. Each outcome is a test at
α = 1 - DECISION_CONFIDENCE whose p-value is small exactly where the interval shown does what the outcome says
(beyond the margin, inside it, off 1); the p-values of one finding's comparisons are corrected together
(Benjamini–Hochberg).

Why 99.9 % and not 95 %: the same framework against itself must never be called faster (the A/A guard,
`calibrate`, verdict/aa.py). At 95 % a comparison of two equal figures whose rounds spread by 5–20 % (this kind of
VM) is called "faster, by a–b %" in 2–5 % of verdicts and "faster by more than 5 %" in up to 2 %
(benchmarks/verdict_aa.py): over the 9 comparisons of a page and its sequential looks, about one page in
three would call a framework faster than itself. At 99.9 % it is about one comparison in a thousand.

The margin m (`DEFAULT_MARGIN_PCT`, 10 %, or `verdict --margin`) is the difference the page treats as worth
switching for: asv's default `--factor` 1.1 (the gate whose "significant change" Python projects rely on);
a 3 % difference in a matmul both frameworks hand to the same BLAS is not a reason to switch, and this
machine's rounds spread by 5–24 % between processes (docs/verdict.md), so a margin below that cannot be
told from its noise in the rounds a verdict affords.

Pure functions: no I/O, no printing, no timing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from jax_benchmarks.report.compare import (MIN_PAIRED_ROUNDS, MIN_ROUNDS, Comparison, LogRatio, benjamini_hochberg,
                                           detectable_log, rounds_needed)

Word = Literal["faster", "slower", "same", "undecided"]

DEFAULT_MARGIN_PCT = 10.0
# The confidence of the interval every outcome rests on (and the page shows): see the module's docstring.
DECISION_CONFIDENCE = 0.999
DECISION_ALPHA = 1 - DECISION_CONFIDENCE
# An interval from 0.1× to 1× is 10× wide: it does not tell "much slower" from "the same". Wider: undecided.
WIDEST_INTERVAL = 10.0
# The most rounds a verdict runs: `--rounds` takes at most 100 (settings.BenchSettings.rounds), so the last index a
# round may have is 99. A comparison that would need more is "more than 100 rounds a side" (never run).
MAX_ROUNDS = 100


@dataclass(frozen=True)
class Decision:
    """What the rounds of one comparison (current = a, baseline = b) let us say."""

    word: Word
    rounds: int  # the fewer rounds of the two sides
    margin_pct: float | None  # m of "beyond ±m %" and "the same within ±m %"; None when refused
    detectable_pct: float | None  # the smallest change these rounds detect; None when not tested
    q_value: float | None  # BH-adjusted p of the claim made (beyond the margin, within it, or off 1)
    why_undecided: str = ""  # for `undecided`: too few rounds, busy, too wide, or not resolved
    refused: bool = False  # the two figures are not the same work: never compared (`why_undecided` says why)
    # For a tested undecided comparison: the rounds a side that would decide it at its spread and observed ratio
    # (`rounds_to_decide`); None: not tested, or more than MAX_ROUNDS.
    rounds_to_decide: int | None = None
    # faster / slower: whether the interval lies beyond the margin ("faster by more than m") or crosses it ("faster,
    # by a–b %"); the same: whether the interval also excludes 1 (a difference inside the margin, named beside it).
    beyond_margin: bool = False
    differs: bool = False
    # Undecided because a side's figures were taken while other processes held the cores: not judged (a page says
    # how many comparisons stayed open for that reason).
    busy: bool = False

    @property
    def decided(self) -> bool:
        """One of the three decided outcomes: faster (or slower) by more than m, the same within ±m %, or faster
        (or slower) by a–b %."""
        return self.word != "undecided"

    @property
    def margin_text(self) -> str:
        """'±10 %'."""
        return "no margin" if self.margin_pct is None else f"±{self.margin_pct:.3g} %"


def p_beyond_margin(ratio: LogRatio, margin: float) -> float:
    """Two-sided p of 'the ratio lies within 1 ± m' (small: beyond it, as the interval shown excludes it)."""
    return ratio.p_beyond(margin)


def p_within_margin(ratio: LogRatio, margin: float) -> float:
    """Twice the larger of the two one-sided p-values of 'the ratio is at or beyond 1 ± m' (small: within): at most
    α exactly where the two-sided 1 - α interval shown lies inside the margin."""
    bound = math.log1p(margin / 100)
    above_low = ratio.p_above(-bound)  # small: clearly above 1 / (1 + m)
    below_high = LogRatio(-ratio.value, ratio.se, ratio.df).p_above(-bound)  # small: clearly below 1 + m
    return min(1.0, 2 * max(above_low, below_high))


def p_differs(ratio: LogRatio) -> float:
    """Two-sided p of 'the ratio is 1' (small: the interval shown excludes 1)."""
    return ratio.p_beyond(0.0)


def detectable_pct(ratio: LogRatio) -> float:
    """The smallest difference (in %) these rounds detect with 80 % power at α = DECISION_ALPHA, two-sided."""
    return math.expm1(detectable_log(ratio.se, ratio.df, DECISION_ALPHA)) * 100


def rounds_to_decide(ratio: LogRatio, spread: float | None, margin: float, paired: bool = False) -> int | None:
    """The rounds a side with which the test (α = DECISION_ALPHA two-sided, 80 % power) decides a comparison at
    `spread` (the rounds' pooled spread of logs), supposing the ratio stays where it is. The nearest decided
    outcome: beyond the margin, the interval excluding 1 suffices ("faster, by a–b %": the distance from 1);
    inside it, the interval either inside the margin or off 1, whichever the ratio is farther from (the larger of
    the two distances). `paired`: rounds taken in turns, judged as pairs (`spread` the spread of the rounds' log
    ratios: report/compare.py's `rounds_needed`). None: no spread, or more than MAX_ROUNDS rounds."""
    if spread is None:
        return None
    bound, value = math.log1p(margin / 100), abs(ratio.value)
    distance = max(value, bound - value)
    if spread == 0:
        return MIN_ROUNDS
    return rounds_needed(spread, math.expm1(distance) * 100, alpha=DECISION_ALPHA, most=MAX_ROUNDS, paired=paired)


def forecast(comparison: Comparison, ratio: LogRatio, margin: float) -> int | None:
    """The rounds that would decide `comparison` (`rounds_to_decide`): as pairs where its rounds are judged as pairs,
    or where they were taken in turns but are still too few to be (`Comparison.pairs_spread`: the pairs' spread, and
    never fewer than the MIN_PAIRED_ROUNDS from which they are judged so); by Welch otherwise."""
    if comparison.pairs_spread is not None:
        as_pairs = rounds_to_decide(ratio, comparison.pairs_spread, margin, paired=True)
        return None if as_pairs is None else max(as_pairs, MIN_PAIRED_ROUNDS)
    return rounds_to_decide(ratio, comparison.spread, margin, comparison.paired)


def decide(comparisons: Sequence[Comparison], margin: float = DEFAULT_MARGIN_PCT) -> list[Decision]:
    """The outcome of each comparison at margin ±`margin` %, those of one finding judged as one family
    (Benjamini–Hochberg)."""
    testable = [i for i, comparison in enumerate(comparisons)
                if comparison.log_ratio is not None and comparison.busy is None and comparison.detectable_pct is not None]
    # Each comparison's own p-values (beyond the margin, within it, off 1), then each test's corrected over the family.
    own = [(p_beyond_margin(r, margin), p_within_margin(r, margin), p_differs(r))
           for r in (_ratio(comparisons[i]) for i in testable)]
    p_own = dict(zip(testable, own, strict=True))
    q_beyond, q_within, q_differs = (dict(zip(testable, benjamini_hochberg([p[test] for p in own]), strict=True))
                                     for test in range(3))
    out = []
    for i, comparison in enumerate(comparisons):
        rounds = min(comparison.rounds, comparison.baseline_rounds)
        if i not in q_beyond:
            why = (f"taken on a busy machine ({comparison.busy}), not judged" if comparison.busy is not None
                   else f"too few rounds to judge, {MIN_ROUNDS} needed a side")
            out.append(Decision("undecided", rounds, margin, None, None, why, busy=comparison.busy is not None))
            continue
        ratio = _ratio(comparison)
        detectable = detectable_pct(ratio)
        low, high = ratio.interval(DECISION_CONFIDENCE)
        direction: Word = "slower" if ratio.value > 0 else "faster"
        differs = q_differs[i] <= DECISION_ALPHA
        decision = Decision("undecided", rounds, margin, detectable, None, "not resolved")
        if high / low > WIDEST_INTERVAL:
            decision = Decision("undecided", rounds, margin, detectable, None,
                                "the interval is too wide to tell")
        elif q_beyond[i] <= DECISION_ALPHA:
            decision = Decision(direction, rounds, margin, detectable, q_beyond[i],
                                beyond_margin=True, differs=True)
        elif q_within[i] <= DECISION_ALPHA:
            decision = Decision("same", rounds, margin, detectable, q_within[i], differs=differs)
        elif differs:
            decision = Decision(direction, rounds, margin, detectable, q_differs[i], differs=True)
        if not decision.decided:
            needed = forecast(comparison, ratio, margin)
            if needed is not None:  # BH over the family can ask a little more than one test: never fewer than done
                needed = max(needed, rounds + 1)
            why = decision.why_undecided
            if why == "not resolved":
                why = not_resolved_why(p_own[i], (q_beyond[i], q_within[i], q_differs[i]), len(testable))
            decision = Decision("undecided", rounds, margin, detectable, None, why, rounds_to_decide=needed)
        out.append(decision)
    return out


def not_resolved_why(p_values: tuple[float, float, float], q_values: tuple[float, float, float], family: int) -> str:
    """Why a tested comparison stays undecided: "not resolved" where its own interval decides nothing either; where
    its own interval alone would decide it (its own p-values, beyond the margin, within it, off 1, at most α) but
    the finding's `family` comparisons judged together (Benjamini–Hochberg: `q_values`) do not, that, so that the
    interval the page shows beside "undecided" is not read as a decision it is not."""
    whats = ("lies beyond the margin", "lies inside the margin", "excludes 1")
    for p, q, what in zip(p_values, q_values, whats, strict=True):
        if p <= DECISION_ALPHA:
            return (f"its own interval {what}, but not once the finding's {family} comparisons are judged together "
                    f"(Benjamini–Hochberg: q = {q:.2g}, above {DECISION_ALPHA:g})")
    return "not resolved"


def refusal(rounds: int, differs: str) -> Decision:
    """The word for two figures that are not the same work: never compared; `differs` names what differs."""
    return Decision("undecided", rounds, None, None, None, differs, refused=True)


def percent_text(value: float) -> str:
    """'2.1', '14', '230': a percentage with two significant digits (whole numbers from 100)."""
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.2g}"


def undecided_text(decision: Decision) -> str:
    """'undecided after 3 rounds: a difference below 14 % is not detectable here; about 9 rounds a side would
    decide it at this spread' (or why it was not tested); a refused comparison: 'not compared: they differ in
    dtype (float32 vs float64)'."""
    if decision.refused:
        return f"not compared: {decision.why_undecided}"
    head = f"undecided after {decision.rounds} round{'' if decision.rounds == 1 else 's'}"
    if decision.detectable_pct is None:
        return f"{head}: {decision.why_undecided}"
    reason = (decision.why_undecided if decision.why_undecided != "not resolved"
              else f"a difference below {decision.detectable_pct:.3g} % is not detectable here")
    return f"{head}: {reason}; {rounds_to_decide_text(decision)}"


def rounds_to_decide_text(decision: Decision) -> str:
    """'about 9 rounds a side would decide it at this spread', or 'more than 100 …'."""
    if decision.rounds_to_decide is None:
        return f"more than {MAX_ROUNDS} rounds a side would be needed at this spread"
    return f"about {decision.rounds_to_decide} rounds a side would decide it at this spread"


def _ratio(comparison: Comparison) -> LogRatio:
    assert comparison.log_ratio is not None  # only testable comparisons are asked
    return comparison.log_ratio
