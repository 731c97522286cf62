"""The engine's values: float NumPy arrays, and undoing NumPy broadcasting in a gradient."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.floating[Any]]


def as_float_array(value: npt.ArrayLike, dtype: npt.DTypeLike | None = None) -> FloatArray:
    """`value` as a float array; integers become float64 (a gradient of an int is meaningless)."""
    array = np.asarray(value, dtype=dtype)
    if not np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float64)
    return array


def unbroadcast(grad: FloatArray, shape: tuple[int, ...]) -> FloatArray:
    """Sum `grad` over the axes broadcasting added or stretched, so it has `shape`.

    An input of shape (4,) added to a (3, 4) array was used 3 times: its
    gradient is the sum over the leading axis; likewise an axis of size 1
    stretched to n sums over that axis.
    """
    if grad.shape == shape:
        return grad
    leading = grad.ndim - len(shape)
    if leading > 0:
        grad = grad.sum(axis=tuple(range(leading)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad.reshape(shape)
