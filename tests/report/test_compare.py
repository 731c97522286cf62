"""Verdicts against a baseline: the rank test on raw samples, IQR overlap on summaries."""

from __future__ import annotations

import pytest

from src.core.results import Record
from src.report.compare import Comparison, compare, is_regression, ranges_overlap
from tests.report.fixtures import record, samples

TS = "2025-01-01T00:00:00+00:00"


def fig(times: list[float], run: str = "new") -> Record:
    return record(run, TS, "xla", "numpy", "matmul_10x10_float64", times)


def verdict(current: list[float], baseline: list[float]) -> Comparison:
    comparison = compare(fig(current), fig(baseline, run="base"))
    assert comparison is not None
    return comparison


@pytest.mark.parametrize(("scale", "verdict"), [(2.0, "slower"), (0.5, "faster"), (1.0, "unchanged")])
def test_mann_whitney_verdicts(scale: float, verdict: str) -> None:
    comparison = compare(fig(samples(scale)), fig(samples(1.0), run="base"))
    assert comparison is not None
    assert comparison.method == "mann-whitney" and comparison.verdict == verdict
    assert comparison.change_pct == pytest.approx((scale - 1.0) * 100)
    assert comparison.baseline_run_id == "base"


def test_overlapping_samples_are_unchanged_even_with_a_different_median() -> None:
    # Same spread, medians 2 % apart, samples interleaved: the noise explains the difference.
    base = [1.00, 1.10, 0.90, 1.05, 0.95, 1.02, 0.98, 1.08]
    now = [x * 1.02 for x in base]
    comparison = compare(fig(now), fig(base))
    assert comparison is not None and comparison.verdict == "unchanged"
    assert comparison.p_value is not None and comparison.p_value > 0.05
    assert comparison.change_pct > 0


def test_three_samples_are_not_enough_for_mann_whitney_to_conclude() -> None:
    # Exact two-sided test with 3 vs 3 samples: the smallest p-value is 0.1.
    comparison = compare(fig([2.0, 2.1, 2.2]), fig([1.0, 1.1, 1.2]))
    assert comparison is not None and comparison.method == "mann-whitney"
    assert comparison.verdict == "unchanged" and comparison.p_value == pytest.approx(0.1)


def test_fewer_samples_use_iqr_overlap() -> None:
    assert verdict([1.3], [1.0]).verdict == "slower"
    assert verdict([1.03], [1.0]).verdict == "unchanged"
    assert verdict([1.0, 1.1], [1.0] * 10).method == "iqr-overlap"


def test_ranges_overlap_uses_the_iqr() -> None:
    assert ranges_overlap(1.0, 0.4, 1.3, 0.4)  # [0.8, 1.2] and [1.1, 1.5]
    assert not ranges_overlap(1.0, 0.1, 1.3, 0.1)
    assert ranges_overlap(1.0, 0.0, 1.08, 0.0)  # single samples get ±5 %


def test_untimed_figure_has_no_comparison() -> None:
    untimed = fig([1.0]).model_copy(update={"median_s": None})
    assert compare(untimed, fig([1.0])) is None


def test_is_regression_needs_significance_and_the_threshold() -> None:
    slower = compare(fig(samples(1.5)), fig(samples(1.0)))
    assert is_regression(slower, 10) and not is_regression(slower, 60)
    noisy_but_slower = compare(fig([1.2, 0.8, 1.3]), fig([1.0, 0.9, 1.1]))
    assert not is_regression(noisy_but_slower, 0)
    assert not is_regression(None, 0)
