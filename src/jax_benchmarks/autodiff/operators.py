"""The engine's operators: each one's forward pass and vector-Jacobian product, written by hand on NumPy.

An `Operator` knows nothing of graphs: `jax_benchmarks.autodiff.graph.apply` runs its `forward` on the
operands' values and records the node; `backward()` calls its `vjp`. A new operator subclasses
`Operator`, sets `name`, and writes both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from jax_benchmarks.autodiff.arrays import FloatArray, unbroadcast

Grads = tuple[FloatArray | None, ...]
Axis = int | tuple[int, ...] | None


class Operator(ABC):
    """One differentiable primitive. Subclasses set `name` and implement `forward` and `vjp`."""

    name: ClassVar[str]

    @abstractmethod
    def forward(self, *values: FloatArray) -> FloatArray:
        """The output for the given input values."""

    @abstractmethod
    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        """grad·∂output/∂input for every input (None where `wants` is False), each of its input's shape."""


# ---- Binary elementwise operators (with NumPy broadcasting), maximum and square ------------------

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


# ---- Elementwise functions of one input ----------------------------------------------------------

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


# ---- Reductions over all or some axes, and log_softmax along one ---------------------------------

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


# ---- reshape and transpose: the same elements in another arrangement -----------------------------

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


# ---- matmul (NumPy semantics, batched and broadcast) and dot -------------------------------------

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
