"""matmul (NumPy semantics, batched and broadcast) and dot (vectors and matrices)."""

from __future__ import annotations

import numpy as np

from jax_benchmarks.autodiff.broadcast import unbroadcast
from jax_benchmarks.autodiff.nodes import OperatorNode
from jax_benchmarks.autodiff.operator import Grads, Operand, Operator
from jax_benchmarks.autodiff.parameter import FloatArray


class Matmul(Operator):
    """a @ b. The VJP promotes 1-D operands to matrices as NumPy does, then undoes it."""

    name = "matmul"

    def forward(self, *values: FloatArray) -> FloatArray:
        a, b = values
        return np.asarray(np.matmul(a, b))

    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        a, b = values
        a2 = a[np.newaxis, :] if a.ndim == 1 else a  # (k,) is a (1, k) row
        b2 = b[:, np.newaxis] if b.ndim == 1 else b  # (k,) is a (k, 1) column
        g2 = grad.reshape(np.matmul(a2, b2).shape)
        grad_a = grad_b = None
        if wants[0]:
            grad_a = unbroadcast(np.matmul(g2, np.swapaxes(b2, -1, -2)), a2.shape).reshape(a.shape)
        if wants[1]:
            grad_b = unbroadcast(np.matmul(np.swapaxes(a2, -1, -2), g2), b2.shape).reshape(b.shape)
        return grad_a, grad_b


class Dot(Matmul):
    """np.dot for vectors and matrices (where it equals matmul); higher ranks are refused."""

    name = "dot"

    def forward(self, *values: FloatArray) -> FloatArray:
        if any(v.ndim not in (1, 2) for v in values):
            raise ValueError(f"dot takes vectors or matrices, got shapes {[v.shape for v in values]}; use matmul")
        return super().forward(*values)


def matmul(a: Operand, b: Operand) -> OperatorNode:
    return Matmul()(a, b)


def dot(a: Operand, b: Operand) -> OperatorNode:
    return Dot()(a, b)
