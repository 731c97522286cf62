"""Elementwise functions of one input: sin, cos, exp, log, relu, tanh, sigmoid, sqrt, abs."""

from __future__ import annotations

import numpy as np

from jax_benchmarks.autodiff.nodes import OperatorNode
from jax_benchmarks.autodiff.operator import Grads, Operand, Operator
from jax_benchmarks.autodiff.parameter import FloatArray


class Sin(Operator):
    name = "sin"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.sin(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad * np.cos(values[0]),)


class Cos(Operator):
    name = "cos"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.cos(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (-grad * np.sin(values[0]),)


class Exp(Operator):
    name = "exp"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.exp(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad * output,)  # d exp(x) = exp(x): reuse the forward value


class Log(Operator):
    name = "log"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.log(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad / values[0],)


class Relu(Operator):
    """max(x, 0); like JAX and PyTorch, the derivative at exactly 0 is taken as 0."""

    name = "relu"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.maximum(values[0], 0)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad * (values[0] > 0),)


def sin(x: Operand) -> OperatorNode:
    return Sin()(x)


def cos(x: Operand) -> OperatorNode:
    return Cos()(x)


def exp(x: Operand) -> OperatorNode:
    return Exp()(x)


def log(x: Operand) -> OperatorNode:
    return Log()(x)


def relu(x: Operand) -> OperatorNode:
    return Relu()(x)


class Tanh(Operator):
    name = "tanh"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.tanh(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad * (1 - output * output),)  # tanh' = 1 - tanh²


class Sigmoid(Operator):
    """1 / (1 + e^-x), written so that no exp overflows: e = e^-|x| ≤ 1 on both branches."""

    name = "sigmoid"

    def forward(self, *values: FloatArray) -> FloatArray:
        (x,) = values
        e = np.exp(-np.abs(x))
        return np.asarray(np.where(x >= 0, 1 / (1 + e), e / (1 + e)))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad * output * (1 - output),)


class Sqrt(Operator):
    name = "sqrt"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.sqrt(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad / (2 * output),)


class Abs(Operator):
    """|x|; its derivative sign(x) is 0 at exactly 0, as in JAX and PyTorch."""

    name = "abs"

    def forward(self, *values: FloatArray) -> FloatArray:
        return np.abs(values[0])

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        return (grad * np.sign(values[0]),)


def tanh(x: Operand) -> OperatorNode:
    return Tanh()(x)


def sigmoid(x: Operand) -> OperatorNode:
    return Sigmoid()(x)


def sqrt(x: Operand) -> OperatorNode:
    return Sqrt()(x)


def abs(x: Operand) -> OperatorNode:  # noqa: A001 - the op's name, as jnp.abs
    return Abs()(x)
