"""Undoing NumPy broadcasting in a VJP: the gradient must have its input's shape."""

from __future__ import annotations

from jax_benchmarks.autodiff.parameter import FloatArray


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
