"""The operators as functions (as `jax.numpy` names them): each call adds one node to the current graph."""

from __future__ import annotations

from jax_benchmarks.autodiff.graph import Operand, OperatorNode, apply, binary, unary
from jax_benchmarks.autodiff.operators import (
    Abs, Add, Axis, Cos, Divide, Dot, Exp, Log, LogSoftmax, Matmul, Max, Maximum, Mean, Multiply, Power, Relu,
    Reshape, Sigmoid, Sin, Sqrt, Square, Subtract, Sum, Tanh, Transpose,
)
from jax_benchmarks.autodiff.spatial import AvgPool2d, Conv2d, Detach, Flatten, LeakyRelu, MaxPool2d, Pad2d


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


def conv2d(x: Operand, w: Operand, b: Operand | None = None, stride: int | tuple[int, int] = 1,
           padding: int | tuple[int, ...] = 0) -> OperatorNode:
    """x (N, C, H, W) convolved with w (O, C, kh, kw), plus b (O,) when given: (N, O, Ho, Wo), as F.conv2d."""
    operator = Conv2d(stride, padding)
    return apply(operator, x, w) if b is None else apply(operator, x, w, b)


def max_pool2d(x: Operand, kernel: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> OperatorNode:
    return apply(MaxPool2d(kernel, stride), x)


def avg_pool2d(x: Operand, kernel: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> OperatorNode:
    return apply(AvgPool2d(kernel, stride), x)


def pad2d(x: Operand, padding: int | tuple[int, ...]) -> OperatorNode:
    """Zeros around height and width: an int, (h, w), or (top, bottom, left, right)."""
    return apply(Pad2d(padding), x)


def leaky_relu(x: Operand, negative_slope: float = 0.01) -> OperatorNode:
    return apply(LeakyRelu(negative_slope), x)


def flatten(x: Operand, start: int = 1) -> OperatorNode:
    """Axes from `start` on merged into one ((N, C, H, W) -> (N, C·H·W) by default, keeping the batch)."""
    return apply(Flatten(start), x)


def detach(x: Operand) -> OperatorNode:
    """x's value with no gradient through it (jax.lax.stop_gradient, torch's detach)."""
    return apply(Detach(), x)
