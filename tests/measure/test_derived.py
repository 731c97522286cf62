"""Derived figures: only from like conditions, never past their physical bound."""

from __future__ import annotations

import pytest

from jax_benchmarks.measure.derived import LOWEST_OVERHEAD, loop_overhead, peak_share

QUIET = {"window_s": 1.0, "busy": False, "cores": 2, "others_cores": 0.1, "steal_cores": 0.0}
BUSY = {"window_s": 1.0, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}


def test_overhead_of_an_epoch_over_its_steps() -> None:
    # 100 steps of 10 ms: an epoch of 1.2 s spends 20 % around them.
    assert loop_overhead(1.2, QUIET, 0.01, QUIET, 100).value == pytest.approx(0.2)
    assert loop_overhead(1.2, {}, 0.01, {}, 100).value == pytest.approx(0.2)  # records without contention


def test_no_overhead_from_unlike_conditions() -> None:
    """The reported case: the step timed while others held the cores, the epoch on a quiet machine."""
    for step, epoch in ((BUSY, QUIET), (QUIET, BUSY)):
        derived = loop_overhead(0.53, epoch, 0.01, step, 100)
        assert derived.value is None and derived.why_not is not None
        assert "busy machine (other processes took 1.6 of 2 cores)" in derived.why_not


@pytest.mark.parametrize("epoch_s", [0.0001, 0.5, 0.94, 0.9501, 0.96, 1.0, 3.0])
def test_overhead_never_below_the_bound(epoch_s: float) -> None:
    """Physical bound: an epoch cannot be faster than its steps; below -5 % is an explained error."""
    derived = loop_overhead(epoch_s, QUIET, 0.01, QUIET, 100)
    if derived.value is None:
        assert epoch_s < 0.95 and derived.why_not is not None and "measurement error" in derived.why_not
    else:
        assert derived.value >= LOWEST_OVERHEAD


@pytest.mark.parametrize("rate", [10.0, 100.0, 100.01, 141.0])
def test_peak_share_at_most_one(rate: float) -> None:
    metrics, failures = peak_share(rate, 100.0)
    if rate <= 100.0:
        assert 0 < metrics["peak_share"] <= 1.0 and failures == []
    else:
        assert metrics == {} and "measurement error" in failures[0]
    assert peak_share(rate, None) == ({}, [])
