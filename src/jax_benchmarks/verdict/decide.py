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
  Where the rounds were tested, it also says how many rounds a side would decide it (`rounds_to_decide`): the
  rounds with which the gate's test, at this comparison's spread between rounds, resolves the distance between
  the observed ratio and the nearer edge of the margin (α 0.05 two-sided, 80 % power; one family). A ratio near
  the margin's edge needs many: a figure within a few % of ±m is not decided on a machine whose rounds spread
  by 10 %.

Pure functions: no I/O, no printing, no timing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from jax_benchmarks.report.compare import ALPHA, MIN_ROUNDS, Comparison, LogRatio, benjamini_hochberg, rounds_needed

Word = Literal["faster", "slower", "same", "undecided"]

DEFAULT_MARGIN_PCT = 5.0
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
    margin_pct: float | None  # m of "beyond ±m %" and "the same within ±m %"; None when not tested
    detectable_pct: float | None  # the smallest change these rounds detect; None when not tested
    q_value: float | None  # BH-adjusted p of the claim made (beyond the margin, or within it)
    why_undecided: str = ""  # for `undecided`: too few rounds, busy, too wide, or not resolved
    refused: bool = False  # the two figures are not the same work: never compared (`why_undecided` says why)
    # For a tested undecided comparison: the rounds a side that would decide it at its spread and observed ratio
    # (`rounds_to_decide`); None: not tested, or more than MAX_ROUNDS.
    rounds_to_decide: int | None = None

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


def rounds_to_decide(ratio: LogRatio, spread: float | None, margin: float) -> int | None:
    """The rounds a side with which the gate's test (α two-sided, POWER) resolves the distance between the observed
    log-ratio and the nearer edge of the margin ±m, at `spread` (the rounds' pooled spread of logs), supposing the
    ratio stays where it is: beyond the margin, "faster"; inside it, "the same" (TOST's one-sided tests at α ask
    no more). None: no spread, a ratio on the edge, or more than MAX_ROUNDS rounds."""
    if spread is None:
        return None
    distance = abs(abs(ratio.value) - math.log1p(margin / 100))
    if spread == 0:
        return MIN_ROUNDS if distance > 0 else None
    needed = rounds_needed(spread, math.expm1(distance) * 100)
    return needed if needed is not None and needed <= MAX_ROUNDS else None


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
        needed = rounds_to_decide(ratio, comparison.spread, margin) if word == "undecided" else None
        if needed is not None:  # BH over the family can ask a little more than one test: never fewer than done
            needed = max(needed, rounds + 1)
        out.append(Decision(word, rounds, margin, comparison.detectable_pct, q, why, rounds_to_decide=needed))
    return out


def refusal(rounds: int, differs: str) -> Decision:
    """The word for two figures that are not the same work: never compared; `differs` names what differs."""
    return Decision("undecided", rounds, None, None, None, differs, refused=True)


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
