"""The function every backend differentiates, its exact derivative, the points it is evaluated at,
and what one gradient variant computed there.

f(x) = 0.2·x + sin(x) + cos(2x),   f′(x) = 0.2 + cos(x) − 2·sin(2x).
The closed forms below, in float64, are the reference every backend is checked against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from jax_benchmarks.autograd.settings import Dtype

F64 = npt.NDArray[np.float64]
Floats = npt.NDArray[np.floating[Any]]

X1 = 3.0
# f(3.0) and f′(3.0) rounded to 7 decimals, printed next to every backend's values to compare by eye
# (a test checks they are the closed forms' values).
EXPECTED_F_X1 = 1.7012903
EXPECTED_DF_X1 = -0.2311615
X2_COUNT = 20

# Max |error| allowed against the float64 closed form, and between backends.
# float32: sin(2x) at x ≈ 31 is rounded at ~4e-6 of its argument's scale; 1e-5 leaves room
# for the different libms of NumPy, XLA and PyTorch. float64: far above rounding noise.
TOLERANCE: dict[Dtype, float] = {"float32": 1e-5, "float64": 1e-10}


def f_exact(x: Floats) -> F64:
    x64 = x.astype(np.float64)
    return np.asarray(0.2 * x64 + np.sin(x64) + np.cos(2 * x64), dtype=np.float64)


def df_exact(x: Floats) -> F64:
    x64 = x.astype(np.float64)
    return np.asarray(0.2 + np.cos(x64) - 2 * np.sin(2 * x64), dtype=np.float64)


@dataclass(frozen=True)
class Points:
    """The inputs, already in the run's dtype, so every backend gets the very same numbers."""

    dtype: Dtype
    shown: Floats  # [x1, *x2]: the points whose f and f′ are printed
    timed: Floats  # linspace(0, 10π, N): the timed gradient

    @classmethod
    def make(cls, dtype: Dtype, count: int) -> Points:
        shown = np.concatenate([[X1], np.linspace(0.0, 4 * np.pi, X2_COUNT)])
        return cls(dtype, shown.astype(dtype), np.linspace(0.0, 10 * np.pi, count).astype(dtype))

    @property
    def case(self) -> str:
        return case_name(self.dtype, self.timed.size)


def case_name(dtype: Dtype, count: int) -> str:
    """The case every variant of every backend records: f′ at `count` points in `dtype`."""
    return f"grad_{count}_{dtype}"


@dataclass(frozen=True)
class Evaluation:
    """What one gradient variant computed, in float64, and its errors against the closed form."""

    points: Points
    f_shown: F64  # f at [x1, *x2] (one per backend and device: f has no variants)
    df_shown: F64  # f′ at [x1, *x2]
    df_timed: F64  # f′ at the timed points

    @property
    def df_all(self) -> F64:
        return np.concatenate([self.df_shown, self.df_timed])

    @property
    def error_f(self) -> float:
        return max_abs_diff(self.f_shown, f_exact(self.points.shown))

    @property
    def error_df(self) -> float:
        return max_abs_diff(self.df_all, df_exact(np.concatenate([self.points.shown, self.points.timed])))


def max_abs_diff(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))))


def format_row(values: Floats, per_line: int = 8) -> str:
    """Four decimals, eight per line (fits 80 columns), no brackets (rich would read [..] as markup)."""
    texts = [f"{v: .4f}" for v in np.asarray(values, dtype=np.float64)]
    lines = [" ".join(texts[i:i + per_line]) for i in range(0, len(texts), per_line)]
    return ("\n" + " " * 11).join(lines)
