"""Relative error and relative difference: how the project compares a figure with another, written once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def relative_error(value: float, reference: float) -> float:
    """|value − reference| / |reference|: how far a result is from what it should be (a zero reference
    counts as 1e-12, so the ratio stays finite)."""
    return abs(value - reference) / max(abs(reference), 1e-12)


def relative_difference(a: npt.ArrayLike, b: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """|a − b| relative to the larger magnitude, elementwise: how far apart two peers are, neither being the
    reference (symmetric, at most 2; two zeros are 0 apart)."""
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(x - y) / np.maximum(np.maximum(np.abs(x), np.abs(y)), 1e-300)
