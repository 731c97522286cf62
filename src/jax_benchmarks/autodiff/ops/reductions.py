"""Reductions over all or some axes (sum, mean, max; their VJP spreads the gradient back over the
reduced axes) and log_softmax, which normalizes along one axis."""

from __future__ import annotations

import numpy as np

from jax_benchmarks.autodiff.nodes import OperatorNode
from jax_benchmarks.autodiff.operator import Grads, Operand, Operator
from jax_benchmarks.autodiff.parameter import FloatArray

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
        count = values[0].size // (output.size or 1)  # "or 1": an empty output
        return (self._spread(grad, values[0].shape) / count,)


class Max(Sum):
    """The largest element; tied maxima share the gradient equally (as jax.numpy.max and torch.amax)."""

    name = "max"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.asarray(np.max(values[0], axis=self.axis, keepdims=self.keepdims))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        (x,) = values
        winners = x == self._spread(output, x.shape)
        count = np.sum(winners, axis=self.axis, keepdims=True)
        return (self._spread(grad, x.shape) * winners / count,)


class LogSoftmax(Operator):
    """x - log(sum(exp(x))) along `axis`, computed as (x - max) - log(sum(exp(x - max))): no exp overflows.

    Its VJP is g - softmax(x)·sum(g), where softmax(x) = exp(output).
    """

    name = "log_softmax"

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def forward(self, *values: FloatArray) -> FloatArray:
        (x,) = values
        shifted = x - np.max(x, axis=self.axis, keepdims=True)
        return np.asarray(shifted - np.log(np.sum(np.exp(shifted), axis=self.axis, keepdims=True)))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad - np.exp(output) * np.sum(grad, axis=self.axis, keepdims=True),)


def sum(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:  # noqa: A001 - the op's name
    return Sum(axis, keepdims)(x)


def mean(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
    return Mean(axis, keepdims)(x)


def max(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:  # noqa: A001 - the op's name
    return Max(axis, keepdims)(x)


def log_softmax(x: Operand, axis: int = -1) -> OperatorNode:
    return LogSoftmax(axis)(x)
