"""Figures whose rounds were taken in turns (`verdict --turns`) are judged as pairs of rounds (report/compare.py's
`paired_log_ratio`): the drift between rounds, common to both figures of a round, cancels; any other two figures
are judged by Welch as before."""

from __future__ import annotations

import random
from collections.abc import Sequence

from jax_benchmarks.report.compare import compare, rounds_needed
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.decide import DECISION_CONFIDENCE, decide
from tests.verdict.fixtures import ENV, figure

TURNS = {**ENV, "turns": True}
# A machine whose speed wanders by up to 1.6× between rounds (the same for both figures of a round) ...
DRIFT = (1.00, 1.30, 0.80, 1.15, 0.90)
# ... and what differs between the two figures of one round taken in turns (±1 %).
OWN = (1.005, 0.995, 1.010, 0.990, 1.000)


def side(backend: str, seconds: float, drift: Sequence[float], env: dict[str, object], rounds: int = 5,
         run_id: str = "20261128T060000Z-aaaaaa") -> list[Record]:
    return figure("xla", backend, "matmul_1000x1000_float64", seconds, rounds=rounds, drift=drift, env=dict(env),
                  run_id=run_id)


def test_rounds_taken_in_turns_decide_a_5_percent_difference_that_welch_cannot() -> None:
    slower = [d * o for d, o in zip(DRIFT, OWN, strict=True)]
    paired = compare(side("jax", 0.0105, slower, TURNS), side("numpy", 0.0100, DRIFT, TURNS))
    welch = compare(side("jax", 0.0105, slower, ENV), side("numpy", 0.0100, DRIFT, ENV))
    assert paired is not None and welch is not None
    assert paired.method == "paired-rounds" and paired.paired and paired.rounds == 5
    assert paired.log_ratio is not None and paired.log_ratio.df == 4
    low, high = paired.log_ratio.interval(DECISION_CONFIDENCE)
    assert 1.0 < low < 1.05 < high < 1.10
    assert welch.method == "welch-rounds"
    assert welch.log_ratio is not None and welch.log_ratio.interval(DECISION_CONFIDENCE)[0] < 1.0
    assert "5 paired round(s)" in paired.test_text


def test_the_same_framework_against_itself_in_turns_is_never_called_faster() -> None:
    draw = random.Random(48)
    words = []
    for _ in range(100):
        drift = [draw.lognormvariate(0, 0.15) for _ in range(5)]
        a = [d * draw.lognormvariate(0, 0.05) for d in drift]
        b = [d * draw.lognormvariate(0, 0.05) for d in drift]
        comparison = compare(side("numpy", 0.01, a, TURNS), side("numpy", 0.01, b, TURNS))
        assert comparison is not None and comparison.paired
        words.append(decide([comparison])[0].word)
    assert "faster" not in words and "slower" not in words


def test_figures_not_both_taken_in_turns_in_one_run_are_judged_by_welch() -> None:
    one_side = compare(side("jax", 0.0105, DRIFT, TURNS), side("numpy", 0.0100, DRIFT, ENV))
    two_runs = compare(side("jax", 0.0105, DRIFT, TURNS, run_id="20261128T060000Z-aaaaaa"),
                       side("numpy", 0.0100, DRIFT, TURNS, run_id="20261128T070000Z-bbbbbb"))
    for comparison in (one_side, two_runs):
        assert comparison is not None and comparison.method == "welch-rounds" and not comparison.paired


def test_rounds_only_one_side_took_in_turns_are_left_out_of_the_pairs() -> None:
    # Round 0 in one process (a group whose `all` checks its backends against each other), rounds 1-5 in turns.
    def mixed(backend: str, seconds: float) -> list[Record]:
        records = side(backend, seconds, (*DRIFT, 1.05), TURNS, rounds=6)
        return [records[0].model_copy(update={"env": dict(ENV)}), *records[1:]]

    comparison = compare(mixed("jax", 0.0105), mixed("numpy", 0.0100))
    assert comparison is not None and comparison.paired
    assert (comparison.rounds, comparison.unpaired_rounds_left_out) == (5, 2)
    # Two rounds in turns and three in one process: too few pairs, so Welch over all five rounds.
    def late(backend: str, seconds: float) -> list[Record]:
        records = side(backend, seconds, DRIFT, TURNS)
        return [*(r.model_copy(update={"env": dict(ENV)}) for r in records[:3]), *records[3:]]

    too_few = compare(late("jax", 0.0105), late("numpy", 0.0100))
    assert too_few is not None and too_few.method == "welch-rounds" and too_few.rounds == 5


def test_fewer_than_five_pairs_are_judged_by_welch() -> None:
    # At 4 pairs the paired test's 3 degrees of freedom cost more than its lower spread gains (MIN_PAIRED_ROUNDS).
    comparison = compare(side("jax", 0.0105, DRIFT, TURNS, rounds=4), side("numpy", 0.0100, DRIFT, TURNS, rounds=4))
    assert comparison is not None and comparison.method == "welch-rounds" and comparison.rounds == 4


def test_rounds_needed_for_pairs_follows_the_paired_test() -> None:
    # Spread 0.05 of the rounds' log ratios, a 10 % change (log 0.0953), α 0.05 and 80 % power:
    # paired, n = 4: (t(.975, 3) 3.182 + t(.8, 3) 0.978) × 0.05 / 2 = 0.104 > 0.0953; n = 5: 3.717 × 0.05 / 2.236 =
    # 0.083: 5 rounds. Welch with each side's spread 0.05, n = 5: 3.195 × 0.05 × √(2/5) = 0.101; n = 6: 0.090: 6.
    assert rounds_needed(0.05, 10.0, paired=True) == 5
    assert rounds_needed(0.05, 10.0) == 6


def test_fewer_than_five_pairs_forecast_the_rounds_that_decide_as_pairs() -> None:
    # 4 rounds in turns of a 10 % difference on a machine whose speed wanders by up to 1.6× between rounds: judged by
    # Welch (its interval wide: undecided), the rounds that would decide it are forecast from the pairs' spread, as
    # the paired test will judge them from 5 pairs on: far fewer than Welch's forecast, and never below 5.
    slower = [d * o for d, o in zip(DRIFT, OWN, strict=True)]
    in_turns = compare(side("jax", 0.0110, slower, TURNS, rounds=4), side("numpy", 0.0100, DRIFT, TURNS, rounds=4))
    apart = compare(side("jax", 0.0110, slower, ENV, rounds=4), side("numpy", 0.0100, DRIFT, ENV, rounds=4))
    assert in_turns is not None and apart is not None
    assert in_turns.method == apart.method == "welch-rounds"
    assert in_turns.pairs_spread is not None and in_turns.pairs_spread < 0.02 and apart.pairs_spread is None
    [paired_forecast] = decide([in_turns], margin=5.0)
    [welch_forecast] = decide([apart], margin=5.0)
    assert paired_forecast.word == welch_forecast.word == "undecided"
    assert paired_forecast.rounds_to_decide == 5  # the pairs decide it as soon as they are judged as pairs
    assert welch_forecast.rounds_to_decide is None or welch_forecast.rounds_to_decide > 20
