"""sum and mean over all or some axes; their VJP spreads the gradient back over the reduced axes."""

from __future__ import annotations

import numpy as np

from src.autograd.engine.nodes import OperatorNode
from src.autograd.engine.operator import Grads, Operand, Operator
from src.autograd.engine.parameter import FloatArray

Axis = int | tuple[int, ...] | None


class Sum(Operator):
    name = "sum"

    def __init__(self, axis: Axis = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.asarray(np.sum(values[0], axis=self.axis, keepdims=self.keepdims))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (self._spread(grad, values[0].shape),)

    def _spread(self, grad: FloatArray, shape: tuple[int, ...]) -> FloatArray:
        """Every input element contributed once to its reduced output element."""
        if self.axis is not None and not self.keepdims:
            grad = np.expand_dims(grad, self.axis)
        return np.broadcast_to(grad, shape)


class Mean(Sum):
    name = "mean"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.asarray(np.mean(values[0], axis=self.axis, keepdims=self.keepdims))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        count = values[0].size // max(output.size, 1)
        return (self._spread(grad, values[0].shape) / count,)


def sum(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:  # noqa: A001 - the op's name
    return Sum(axis, keepdims)(x)


def mean(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
    return Mean(axis, keepdims)(x)
