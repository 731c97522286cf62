"""Parameters: the named, trainable values a Module owns between calls."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from jax_benchmarks.autodiff.operable import Operable

FloatArray = npt.NDArray[np.floating[Any]]


def as_float_array(value: npt.ArrayLike, dtype: npt.DTypeLike | None = None) -> FloatArray:
    """`value` as a float array; integers become float64 (a gradient of an int is meaningless)."""
    array = np.asarray(value, dtype=dtype)
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float64)
    return array


class Parameter(Operable):
    """A named value owned by a Module; every call grounds it as one leaf node of that call's graph.

    The value is replaced (not mutated) by training, so graphs of earlier calls keep
    the value they were computed with. Inside a Module call, arithmetic on it
    (`p * p`, `x @ p`, `p.tanh()`) builds nodes of that call's graph.
    """

    def __init__(self, name: str, value: npt.ArrayLike) -> None:
        self.name = name
        self.value: FloatArray = as_float_array(value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    def __repr__(self) -> str:
        return f"Parameter({self.name!r}, shape={self.shape})"
