"""The four outcomes (verdict/decide.py), known answers on synthetic records: a real 10 % difference is faster by
more than 5 %, a real 8 % difference with a wide interval is "faster, by a–b %", an equal pair is the same within ±m %
(the margin stated, a difference the interval shows named), a noisy equal pair and too few rounds are undecided;
and the A/A guard: one framework against itself is never called faster."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.report.compare import Comparison, compare, pooled_spread, welch_log_ratio
from jax_benchmarks.store.record import Record
import math
import random

from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT, Decision, decide, undecided_text
from jax_benchmarks.verdict.findings import contrasts

from tests.verdict.fixtures import QUIET_DRIFT as QUIETER, figure

# Per round: the machine's drift between processes, ±1 %: 8 rounds detect a change well below 5 %.
QUIET = (1.000, 1.010, 0.995, 1.005, 0.990, 1.000, 1.008, 0.996)


def pair(a_s: float, b_s: float, rounds: int, drift: Sequence[float] = QUIET) -> tuple[list[Record], list[Record]]:
    case = "matmul_1000x1000_float64"
    return (figure("xla", "jax", case, a_s, rounds=rounds, drift=drift),
            figure("xla", "numpy", case, b_s, rounds=rounds, drift=tuple(reversed(drift))))


def decided(a_s: float, b_s: float, rounds: int, drift: Sequence[float] = QUIET, margin: float = 5.0) -> Decision:
    a, b = pair(a_s, b_s, rounds, drift)
    comparison = compare(a, b)
    assert comparison is not None
    return decide([comparison], margin)[0]


def phrase(a_s: float, b_s: float, rounds: int, drift: Sequence[float] = QUIET, margin: float = 5.0) -> str:
    a, b = pair(a_s, b_s, rounds, drift)
    [contrast] = contrasts([("jax", a, "numpy", b)], margin)
    return contrast.phrase()


def test_a_real_ten_percent_difference_is_faster_by_more_than_the_margin() -> None:
    decision = decided(0.0100, 0.0110, rounds=8)
    assert decision.word == "faster" and decision.beyond_margin and decision.margin_pct == 5.0
    assert decision.q_value is not None and decision.q_value <= 0.001
    assert decided(0.0110, 0.0100, rounds=8).word == "slower"
    assert phrase(0.0100, 0.0110, 8).startswith("jax is 1.10× faster than numpy (99.9 % CI ")
    assert "margin ±5 %" in phrase(0.0100, 0.0110, 8)


def test_a_real_eight_percent_difference_with_a_wide_interval_is_faster_by_its_interval() -> None:
    drift = (1.0, 1.03, 0.97, 1.015, 0.985, 1.0)  # rounds ±3 %: the 99.9 % interval is 2–14 %, across the margin
    decision = decided(0.0100, 0.0108, rounds=6, drift=drift)
    assert decision.word == "faster" and not decision.beyond_margin and decision.decided
    assert phrase(0.0100, 0.0108, 6, drift).startswith("jax is faster than numpy, by 2.1–14 % (99.9 % CI 1.02–1.14×, "
                                                      "margin ±5 %")
    assert phrase(0.0108, 0.0100, 6, drift).startswith("jax is slower than numpy, by 2.1–14 % (")


def test_a_real_three_percent_difference_with_a_tight_interval_is_the_same_with_the_difference_named() -> None:
    decision = decided(0.0100, 0.0103, rounds=8, drift=QUIETER)
    assert decision.word == "same" and decision.differs and decision.decided
    assert phrase(0.0100, 0.0103, 8, QUIETER).startswith(
        "jax and numpy are the same within ±5 % (jax faster by 2.5–3.5 %; ratio 1.03, 99.9 % CI 1.02–1.04×")


def test_an_equal_pair_is_the_same_within_the_stated_margin() -> None:
    decision = decided(0.0100, 0.0100, rounds=8, margin=DEFAULT_MARGIN_PCT)
    assert decision.word == "same" and decision.margin_pct == DEFAULT_MARGIN_PCT == 10.0 and not decision.differs
    assert "jax and numpy are the same within ±10 % (ratio 1.00" in phrase(0.0100, 0.0100, 8, margin=10.0)


def test_a_noisy_equal_pair_is_not_called_the_same_but_undecided_with_its_detectable_change() -> None:
    noisy = (1.00, 1.12, 0.90, 1.06, 0.95)  # rounds ±10 %: 5 rounds detect only a larger change than 5 %
    decision = decided(0.0100, 0.0100, rounds=5, drift=noisy)
    assert decision.word == "undecided" and decision.margin_pct == 5.0
    assert decision.detectable_pct is not None and decision.detectable_pct > 5.0
    assert decision.rounds_to_decide is None  # at 99.9 %, more than 100 rounds a side at ±10 % rounds
    assert undecided_text(decision) == (f"undecided after 5 rounds: a difference below "
                                        f"{decision.detectable_pct:.3g} % is not detectable here; more than 100 "
                                        f"rounds a side would be needed at this spread")


def test_too_few_rounds_are_undecided_and_say_how_many() -> None:
    decision = decided(0.0100, 0.0200, rounds=2)
    assert decision.word == "undecided" and decision.q_value is None
    assert undecided_text(decision) == "undecided after 2 rounds: too few rounds to judge, 3 needed a side"


def test_an_unresolved_difference_is_undecided_with_its_detectable_change() -> None:
    # 4 % apart, 3 rounds drifting ±3 %: neither beyond the margin nor clearly inside it.
    decision = decided(0.0100, 0.0104, rounds=3, drift=(1.00, 1.03, 0.97))
    assert decision.word == "undecided" and decision.detectable_pct is not None
    assert undecided_text(decision).startswith(f"undecided after 3 rounds: a difference below "
                                               f"{decision.detectable_pct:.3g} % is not detectable here; ")


def test_the_rounds_an_undecided_comparison_names_are_the_rounds_that_decide_it() -> None:
    noisy = (1.00, 1.12, 0.90, 1.06, 0.95)  # rounds ±10 %
    # 15 % apart: undecided after 3 rounds; the same spread over the rounds it names decides it, faster (the
    # rounds are named with 80 % power: at that count a real difference of this size is decided 4 times in 5).
    first = decided(0.0100, 0.0115, rounds=3, drift=noisy[:3])
    assert first.word == "undecided" and first.rounds_to_decide is not None
    named = first.rounds_to_decide
    longer = tuple(noisy[:3][i % 3] for i in range(named))  # the same three drifts, repeated: the same spread
    assert decided(0.0100, 0.0115, rounds=named, drift=longer).word == "faster"


def test_a_ratio_near_the_margin_needs_more_rounds_than_one_far_from_it() -> None:
    noisy = (1.00, 1.12, 0.90, 1.06, 0.95)
    far = decided(0.0100, 0.0130, rounds=3, drift=noisy[:3])
    near = decided(0.0100, 0.0115, rounds=3, drift=noisy[:3])
    assert far.rounds_to_decide is not None and near.rounds_to_decide is not None
    assert near.rounds_to_decide > far.rounds_to_decide
    on_the_edge = decided(0.0100, 0.0105, rounds=5, drift=noisy)  # the ratio sits on the margin: no rounds decide it
    assert on_the_edge.word == "undecided" and on_the_edge.rounds_to_decide is None
    assert undecided_text(on_the_edge).endswith("; more than 100 rounds a side would be needed at this spread")


def test_an_interval_wider_than_ten_times_is_never_a_finding() -> None:
    decision = decided(0.01, 0.5, rounds=3, drift=(0.05, 1.0, 20.0))  # rounds 400× apart
    assert decision.word == "undecided" and decision.why_undecided == "the interval is too wide to tell"


def test_the_same_framework_against_itself_is_called_faster_at_most_once_in_a_hundred() -> None:
    """The A/A guard, property-style: per seed, noise level and rounds, two sides drawn from one distribution (each
    round a fresh process's fastest sample, log-normal drift). At 95 % (the rule before 2026-11-27) about 5 % of
    these comparisons come out "faster" or "slower" by chance; at 99.9 % (DECISION_CONFIDENCE) none of these 120 do,
    and 3 of 600 (50 seeds) did, all at 3 rounds a side, where a side's three rounds can agree closely by chance
    (Welch's t on 3 rounds): the guard is a rate, at most a few in a thousand, not a proof."""
    called, trials = [], 0
    for seed in range(10):
        for noise in (0.01, 0.05, 0.1, 0.2):
            for rounds in (3, 6, 10):
                rng = random.Random(seed * 1000 + rounds)
                a = [0.01 * math.exp(rng.gauss(0, noise)) for _ in range(rounds)]
                b = [0.01 * math.exp(rng.gauss(0, noise)) for _ in range(rounds)]
                ratio = welch_log_ratio(a, b)
                comparison = Comparison("aa", 0.01, 0.0, 0.0, "unchanged", "welch-rounds", None, rounds, rounds,
                                        ratio, spread=pooled_spread(a, b))
                trials += 1
                if decide([comparison], 5.0)[0].word in ("faster", "slower"):
                    called.append((seed, noise, rounds))
    assert trials == 120 and len(called) <= 1, called
    assert all(rounds == 3 for _, _, rounds in called)


def test_an_interval_clear_of_the_margin_that_the_family_holds_back_says_so_beside_undecided() -> None:
    """Item 6 (issue 48): the page shows each comparison's own 99.9 % interval; where that interval lies beyond the
    margin but the finding's comparisons judged together (Benjamini–Hochberg) leave it undecided, its reason says so,
    never "a difference below … is not detectable" beside an interval that plainly shows one."""
    from jax_benchmarks.verdict.decide import DECISION_ALPHA, p_beyond_margin, p_differs
    from jax_benchmarks.report.compare import LogRatio

    def judged(ratio: LogRatio) -> Comparison:
        return Comparison("b", 0.01, 0.0, 0.0, "unchanged", "welch-rounds", None, 6, 6, ratio, spread=0.05)

    # A 1.27× slowdown at a ±1 % margin whose own p-values (beyond the margin, and off 1) lie between α/2 and α:
    # alone it is decided; with an equal pair beside it, BH doubles both past α.
    se, df, margin = 0.05, 10.0, 1.0
    value = next(v / 1000 for v in range(100, 700)
                 if DECISION_ALPHA / 2 < p_differs(LogRatio(v / 1000, se, df))
                 and p_beyond_margin(LogRatio(v / 1000, se, df), margin) <= DECISION_ALPHA)
    clear = LogRatio(value, se, df)
    low, _ = clear.interval(0.999)
    assert low > 1.01  # its own interval lies beyond the margin
    alone = decide([judged(clear)], margin)[0]
    assert alone.word == "slower" and alone.beyond_margin
    held, other = decide([judged(clear), judged(LogRatio(0.0, 0.1, df))], margin)
    assert held.word == "undecided" and other.word == "undecided"
    assert held.why_undecided.startswith("its own interval lies beyond the margin, but not once the finding's 2 "
                                         "comparisons are judged together (Benjamini–Hochberg: q = ")
    assert undecided_text(held).startswith("undecided after 6 rounds: its own interval lies beyond the margin")
    assert "not detectable" not in undecided_text(held)
    assert other.why_undecided == "not resolved"  # an interval that decides nothing alone keeps the usual reason
