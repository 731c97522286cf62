"""Relative error and relative difference: how the project compares a figure with another, written once."""

from __future__ import annotations


def relative_error(value: float, reference: float) -> float:
    """|value − reference| / |reference|: how far a result is from what it should be (a zero reference
    counts as 1e-12, so the ratio stays finite)."""
    return abs(value - reference) / max(abs(reference), 1e-12)


def relative_difference(a: float, b: float) -> float:
    """|a − b| relative to the larger magnitude: how far apart two peers are, neither being the reference
    (symmetric, and at most 2)."""
    return abs(a - b) / max(abs(a), abs(b))
