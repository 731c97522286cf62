"""The engine's values: float NumPy arrays, undoing NumPy broadcasting in a gradient, and the error an
operator raises on operands it cannot take."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from jax_benchmarks.errors import DataError

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


class OperandError(DataError, ValueError):
    """Operands an operator cannot take (shapes that do not fit, a kernel larger than its input, a stride
    of 0, NaN in an image): one line naming the operator and the shapes. A DataError, so the CLI prints it
    as one `Error:` line with exit code 2; a ValueError, so library callers catch it as NumPy's."""


def check_finite(op: str, x: FloatArray, shapes: str) -> None:
    """Refuse NaN in `x` (an infinity is allowed: it is a value, a NaN is a missing one). np.sum is NaN as
    soon as one element is NaN (or when +inf meets -inf), so the common case costs one reduction."""
    if not np.isnan(np.sum(x)):
        return
    count = int(np.count_nonzero(np.isnan(x)))
    if count:
        raise OperandError(f"{op}: the input holds {count} NaN value(s); {shapes}")
