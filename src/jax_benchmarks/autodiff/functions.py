"""The operators as functions (as `jax.numpy` names them): each call adds one node to the current graph."""

from __future__ import annotations

from jax_benchmarks.autodiff.graph import Operand, OperatorNode, apply, binary, unary
from jax_benchmarks.autodiff.operators import (
    Abs, Add, Axis, Cos, Divide, Dot, Exp, Log, LogSoftmax, Matmul, Max, Maximum, Mean, Multiply, Power, Relu,
    Reshape, Sigmoid, Sin, Sqrt, Square, Subtract, Sum, Tanh, Transpose,
)


add, subtract, multiply, divide = binary(Add), binary(Subtract), binary(Multiply), binary(Divide)
power, maximum, matmul, dot = binary(Power), binary(Maximum), binary(Matmul), binary(Dot)
square, sin, cos, exp, log, relu = unary(Square), unary(Sin), unary(Cos), unary(Exp), unary(Log), unary(Relu)
tanh, sigmoid, sqrt, abs = unary(Tanh), unary(Sigmoid), unary(Sqrt), unary(Abs)  # noqa: A001 - jnp's names


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
