"""Three honest words for a comparison of two figures: *faster*, *the same within ±m %*, or *undecided*.

Built on the regression gate's test (`jax_benchmarks.report.compare`): the log of the ratio of the geometric
means of the rounds' fastest samples, with Welch's standard error, and the gate's minimum detectable change
(`Comparison.detectable_pct`: the smallest change these rounds detect at α 0.05 two-sided with 80 % power).

* The margin m: `DEFAULT_MARGIN_PCT` (5 %), the difference the page treats as real, the same for both claims.
  It is not widened to the rounds' detectable change: the tests below already account for the rounds' spread
  (a wide interval neither excludes nor fits inside ±m), and a wider margin would make "faster" ask for more
  than its interval shows (beyond 1 + detectable change, about 6.5 standard errors at 3 rounds a side) and
  let "the same" mean "within ±50 %". Where neither claim holds, the sentence gives the detectable change.
* faster / slower: Welch's test says the ratio lies beyond the margin (beyond 1 + m, or below 1 / (1 + m)),
  two-sided: the 95 % interval the page shows excludes the margin.
* the same within ±m %: an equivalence test, TOST on the log-ratio (Schuirmann 1987): both one-sided tests
  say the ratio lies inside [1 / (1 + m), 1 + m].
* Both tests' p-values of one finding's comparisons are corrected together (Benjamini–Hochberg) at α.
* undecided: neither, too few rounds (fewer than MIN_ROUNDS a side), a busy machine, or a 95 % interval
  wider than `WIDEST_INTERVAL` (from 0.1× to 1× tells "much slower" from nothing): "undecided after N rounds".

Pure functions: no I/O, no printing, no timing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from jax_benchmarks.report.compare import ALPHA, MIN_ROUNDS, Comparison, LogRatio, benjamini_hochberg

Word = Literal["faster", "slower", "same", "undecided"]

DEFAULT_MARGIN_PCT = 5.0
# An interval from 0.1× to 1× is 10× wide: it does not tell "much slower" from "the same". Wider: undecided.
WIDEST_INTERVAL = 10.0


@dataclass(frozen=True)
class Decision:
    """What the rounds of one comparison (current = a, baseline = b) let us say."""

    word: Word
    rounds: int  # the fewer rounds of the two sides
    margin_pct: float | None  # m of "beyond ±m %" and "the same within ±m %"; None when not tested
    detectable_pct: float | None  # the smallest change these rounds detect; None when not tested
    q_value: float | None  # BH-adjusted p of the claim made (beyond the margin, or within it)
    why_undecided: str = ""  # for `undecided`: too few rounds, busy, too wide, or not resolved
    refused: bool = False  # the two figures are not the same work: never compared (`why_undecided` says why)

    @property
    def margin_text(self) -> str:
        """'±5 %'."""
        return "no margin" if self.margin_pct is None else f"±{self.margin_pct:.3g} %"


def p_beyond_margin(ratio: LogRatio, margin: float) -> float:
    """Two-sided p of 'the ratio lies within 1 ± m' (small: beyond it, as the 95 % interval shown excludes it)."""
    return ratio.p_beyond(margin)


def p_within_margin(ratio: LogRatio, margin: float) -> float:
    """TOST: the larger of the two one-sided p-values of 'the ratio is at or beyond 1 ± m' (small: within)."""
    bound = math.log1p(margin / 100)
    above_low = ratio.p_above(-bound)  # small: clearly above 1 / (1 + m)
    below_high = LogRatio(-ratio.value, ratio.se, ratio.df).p_above(-bound)  # small: clearly below 1 + m
    return max(above_low, below_high)


def decide(comparisons: Sequence[Comparison]) -> list[Decision]:
    """The word for each comparison, those of one finding judged as one family (Benjamini–Hochberg)."""
    margin = DEFAULT_MARGIN_PCT
    testable = [i for i, comparison in enumerate(comparisons)
                if comparison.log_ratio is not None and comparison.busy is None and comparison.detectable_pct is not None]
    beyond = benjamini_hochberg([p_beyond_margin(_ratio(comparisons[i]), margin) for i in testable])
    within = benjamini_hochberg([p_within_margin(_ratio(comparisons[i]), margin) for i in testable])
    q_beyond, q_within = dict(zip(testable, beyond, strict=True)), dict(zip(testable, within, strict=True))
    out = []
    for i, comparison in enumerate(comparisons):
        rounds = min(comparison.rounds, comparison.baseline_rounds)
        if i not in q_beyond:
            why = (f"taken on a busy machine ({comparison.busy}), not judged" if comparison.busy is not None
                   else f"too few rounds to judge, {MIN_ROUNDS} needed a side")
            out.append(Decision("undecided", rounds, None, None, None, why))
            continue
        ratio = _ratio(comparison)
        low, high = ratio.interval()
        word: Word = "undecided"
        q: float | None = None
        why = ""
        if high / low > WIDEST_INTERVAL:
            why = "the interval is too wide to tell"
        elif q_beyond[i] <= ALPHA:
            word, q = ("slower" if ratio.value > 0 else "faster"), q_beyond[i]
        elif q_within[i] <= ALPHA:
            word, q = "same", q_within[i]
        else:
            why = "not resolved"
        out.append(Decision(word, rounds, margin, comparison.detectable_pct, q, why))
    return out


def refusal(rounds: int, differs: str) -> Decision:
    """The word for two figures that are not the same work: never compared; `differs` names what differs."""
    return Decision("undecided", rounds, None, None, None, differs, refused=True)


def undecided_text(decision: Decision) -> str:
    """'undecided after 3 rounds: a difference below 14 % is not detectable here' (or why it was not tested);
    a refused comparison: 'not compared: they differ in dtype (float32 vs float64)'."""
    if decision.refused:
        return f"not compared: {decision.why_undecided}"
    head = f"undecided after {decision.rounds} round{'' if decision.rounds == 1 else 's'}"
    if decision.detectable_pct is None or decision.why_undecided != "not resolved":
        return f"{head}: {decision.why_undecided}"
    return f"{head}: a difference below {decision.detectable_pct:.3g} % is not detectable here"


def _ratio(comparison: Comparison) -> LogRatio:
    assert comparison.log_ratio is not None  # only testable comparisons are asked
    return comparison.log_ratio
