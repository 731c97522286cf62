"""Is a figure faster, slower or unchanged against a baseline, given the noise?

With at least 3 raw samples on both sides we ask a rank test (Mann-Whitney U,
two-sided): timing samples are skewed and have outliers, so a t-test would be
the wrong tool. With fewer samples only the summaries are usable: the figures
differ when their [median - IQR/2, median + IQR/2] ranges do not overlap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from src.core.results import Record
from src.core.timing import NOISY_IQR_RATIO

Verdict = Literal["faster", "slower", "unchanged"]
Method = Literal["mann-whitney", "iqr-overlap"]

ALPHA = 0.05
MIN_SAMPLES = 3
# A single-sample figure has IQR 0, which would make any difference "real";
# give it the widest spread a figure can have without being flagged noisy.
MIN_HALF_SPREAD = NOISY_IQR_RATIO / 2


@dataclass(frozen=True)
class Comparison:
    baseline_run_id: str
    baseline_median_s: float
    baseline_iqr_s: float
    change_pct: float  # + slower, - faster
    verdict: Verdict
    method: Method
    p_value: float | None  # Mann-Whitney only


def mann_whitney_p(current: Sequence[float], baseline: Sequence[float]) -> float:
    """Two-sided p-value that both sample sets come from the same distribution."""
    # Lazy: keeps `report --help` fast. No scipy stubs are installed (ignore kept valid if they are).
    from scipy.stats import mannwhitneyu  # type: ignore[import-untyped, unused-ignore]

    p = float(mannwhitneyu(current, baseline, alternative="two-sided").pvalue)
    return 1.0 if math.isnan(p) else p  # all values tied: nothing to tell apart


def ranges_overlap(median_a: float, iqr_a: float, median_b: float, iqr_b: float) -> bool:
    half_a = max(iqr_a / 2, MIN_HALF_SPREAD * median_a)
    half_b = max(iqr_b / 2, MIN_HALF_SPREAD * median_b)
    return median_a - half_a <= median_b + half_b and median_b - half_b <= median_a + half_a


def direction(current: float, baseline: float) -> Verdict:
    if current > baseline:
        return "slower"
    if current < baseline:
        return "faster"
    return "unchanged"


def compare(current: Record, baseline: Record) -> Comparison | None:
    """The change of `current` against `baseline`; None when either has no timing."""
    if not current.median_s or not baseline.median_s:
        return None
    cur_iqr, base_iqr = current.iqr_s or 0.0, baseline.iqr_s or 0.0
    method: Method
    p: float | None = None
    if len(current.samples_s) >= MIN_SAMPLES and len(baseline.samples_s) >= MIN_SAMPLES:
        method = "mann-whitney"
        p = mann_whitney_p(current.samples_s, baseline.samples_s)
        significant = p < ALPHA
    else:
        method = "iqr-overlap"
        significant = not ranges_overlap(current.median_s, cur_iqr, baseline.median_s, base_iqr)
    return Comparison(
        baseline_run_id=baseline.run_id,
        baseline_median_s=baseline.median_s,
        baseline_iqr_s=base_iqr,
        change_pct=(current.median_s - baseline.median_s) / baseline.median_s * 100,
        verdict=direction(current.median_s, baseline.median_s) if significant else "unchanged",
        method=method,
        p_value=p,
    )


def is_regression(comparison: Comparison | None, threshold_pct: float) -> bool:
    """Slower beyond the noise and by more than `threshold_pct` percent."""
    return comparison is not None and comparison.verdict == "slower" and comparison.change_pct > threshold_pct
