"""The operators as functions (as `jax.numpy` names them): each call adds one node to the current graph."""

from __future__ import annotations

from jax_benchmarks.autodiff.graph import Operand, OperatorNode, apply
from jax_benchmarks.autodiff.operators import (
    Abs, Add, Axis, Cos, Divide, Dot, Exp, Log, LogSoftmax, Matmul, Max, Maximum, Mean, Multiply, Power, Relu,
    Reshape, Sigmoid, Sin, Sqrt, Square, Subtract, Sum, Tanh, Transpose,
)


def add(a: Operand, b: Operand) -> OperatorNode:
    return apply(Add(), a, b)


def subtract(a: Operand, b: Operand) -> OperatorNode:
    return apply(Subtract(), a, b)


def multiply(a: Operand, b: Operand) -> OperatorNode:
    return apply(Multiply(), a, b)


def divide(a: Operand, b: Operand) -> OperatorNode:
    return apply(Divide(), a, b)


def power(a: Operand, b: Operand) -> OperatorNode:
    return apply(Power(), a, b)


def maximum(a: Operand, b: Operand) -> OperatorNode:
    return apply(Maximum(), a, b)


def square(x: Operand) -> OperatorNode:
    return apply(Square(), x)


def sin(x: Operand) -> OperatorNode:
    return apply(Sin(), x)


def cos(x: Operand) -> OperatorNode:
    return apply(Cos(), x)


def exp(x: Operand) -> OperatorNode:
    return apply(Exp(), x)


def log(x: Operand) -> OperatorNode:
    return apply(Log(), x)


def relu(x: Operand) -> OperatorNode:
    return apply(Relu(), x)


def tanh(x: Operand) -> OperatorNode:
    return apply(Tanh(), x)


def sigmoid(x: Operand) -> OperatorNode:
    return apply(Sigmoid(), x)


def sqrt(x: Operand) -> OperatorNode:
    return apply(Sqrt(), x)


def abs(x: Operand) -> OperatorNode:  # noqa: A001 - the op's name, as jnp.abs
    return apply(Abs(), x)


def sum(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:  # noqa: A001 - the op's name
    return apply(Sum(axis, keepdims), x)


def mean(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
    return apply(Mean(axis, keepdims), x)


def max(x: Operand, axis: Axis = None, keepdims: bool = False) -> OperatorNode:  # noqa: A001 - the op's name
    return apply(Max(axis, keepdims), x)


def log_softmax(x: Operand, axis: int = -1) -> OperatorNode:
    return apply(LogSoftmax(axis), x)


def reshape(x: Operand, shape: int | tuple[int, ...]) -> OperatorNode:
    return apply(Reshape((shape,) if isinstance(shape, int) else tuple(shape)), x)


def transpose(x: Operand, axes: tuple[int, ...] | None = None) -> OperatorNode:
    return apply(Transpose(None if axes is None else tuple(axes)), x)


def matmul(a: Operand, b: Operand) -> OperatorNode:
    return apply(Matmul(), a, b)


def dot(a: Operand, b: Operand) -> OperatorNode:
    return apply(Dot(), a, b)
