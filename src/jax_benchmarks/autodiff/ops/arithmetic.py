"""Binary elementwise operators (with NumPy broadcasting), maximum and square."""

from __future__ import annotations

import numpy as np

from jax_benchmarks.autodiff.broadcast import unbroadcast
from jax_benchmarks.autodiff.nodes import OperatorNode
from jax_benchmarks.autodiff.operator import Grads, Operand, Operator
from jax_benchmarks.autodiff.parameter import FloatArray


class Add(Operator):
    name = "add"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return a + b

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        return unbroadcast(grad, a.shape), unbroadcast(grad, b.shape)


class Subtract(Operator):
    name = "subtract"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return a - b

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        return unbroadcast(grad, a.shape), unbroadcast(-grad, b.shape)


class Multiply(Operator):
    name = "multiply"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return a * b

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        return (
            unbroadcast(grad * b, a.shape) if wants[0] else None,
            unbroadcast(grad * a, b.shape) if wants[1] else None,
        )


class Divide(Operator):
    name = "divide"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return a / b

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        return (
            unbroadcast(grad / b, a.shape) if wants[0] else None,
            unbroadcast(-grad * output / b, b.shape) if wants[1] else None,  # -a/b² = -(a/b)/b
        )


class Power(Operator):
    """a ** b; the gradient w.r.t. b (a^b·ln a) is only formed when b needs one, and is 0 where a ≤ 0."""

    name = "power"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return np.power(a, b)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        grad_a = grad_b = None
        if wants[0]:
            grad_a = unbroadcast(grad * b * np.power(a, b - 1), a.shape)
        if wants[1]:
            log_a = np.log(np.where(a > 0, a, 1.0))
            grad_b = unbroadcast(grad * output * log_a, b.shape)
        return grad_a, grad_b


class Maximum(Operator):
    """The larger of a and b; where they tie, each gets half the gradient (as in JAX and PyTorch)."""

    name = "maximum"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return np.maximum(a, b)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        share_a = (a > b) + 0.5 * (a == b)
        return (
            unbroadcast(grad * share_a, a.shape) if wants[0] else None,
            unbroadcast(grad * (1 - share_a), b.shape) if wants[1] else None,
        )


class Square(Operator):
    name = "square"

    def forward(self, *values: FloatArray) -> FloatArray:
        (x,) = values
        return np.square(x)

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        (x,) = values
        return (grad * 2 * x,)


def add(a: Operand, b: Operand) -> OperatorNode:
    return Add()(a, b)


def subtract(a: Operand, b: Operand) -> OperatorNode:
    return Subtract()(a, b)


def multiply(a: Operand, b: Operand) -> OperatorNode:
    return Multiply()(a, b)


def divide(a: Operand, b: Operand) -> OperatorNode:
    return Divide()(a, b)


def power(a: Operand, b: Operand) -> OperatorNode:
    return Power()(a, b)


def maximum(a: Operand, b: Operand) -> OperatorNode:
    return Maximum()(a, b)


def square(x: Operand) -> OperatorNode:
    return Square()(x)
