"""reshape and transpose: the same elements in another arrangement; the VJP arranges the gradient back."""

from __future__ import annotations

import numpy as np

from jax_benchmarks.autodiff.nodes import OperatorNode
from jax_benchmarks.autodiff.operator import Grads, Operand, Operator
from jax_benchmarks.autodiff.parameter import FloatArray


class Reshape(Operator):
    name = "reshape"

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def forward(self, *values: FloatArray) -> FloatArray:
        return values[0].reshape(self.shape)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad.reshape(values[0].shape),)


class Transpose(Operator):
    """Axes permuted as np.transpose (reversed when `axes` is None); the VJP applies the inverse permutation."""

    name = "transpose"

    def __init__(self, axes: tuple[int, ...] | None = None) -> None:
        self.axes = axes

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.transpose(values[0], self.axes)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        axes = self.axes if self.axes is not None else tuple(reversed(range(grad.ndim)))
        return (np.transpose(grad, np.argsort([a % grad.ndim for a in axes])),)


def reshape(x: Operand, shape: int | tuple[int, ...]) -> OperatorNode:
    return Reshape((shape,) if isinstance(shape, int) else tuple(shape))(x)


def transpose(x: Operand, axes: tuple[int, ...] | None = None) -> OperatorNode:
    return Transpose(None if axes is None else tuple(axes))(x)
