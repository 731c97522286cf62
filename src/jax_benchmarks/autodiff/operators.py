"""The engine's operators: each one's forward pass and vector-Jacobian product, written by hand on NumPy.

An `Operator` knows nothing of graphs: `jax_benchmarks.autodiff.graph.apply` runs its `forward` on the
operands' values and records the node; `backward()` calls its `vjp`. A new operator subclasses
`Operator`, sets `name`, and writes both.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from jax_benchmarks.autodiff.arrays import FloatArray, unbroadcast

Grads = tuple[FloatArray | None, ...]
Axis = int | tuple[int, ...] | None


class Operator(ABC):
    """One differentiable primitive. Subclasses set `name` and implement `forward` and `vjp`."""

    name: ClassVar[str]
    # False for an operator no gradient flows through (detach): its node is a constant for backprop.
    differentiable: ClassVar[bool] = True

    @abstractmethod
    def forward(self, *values: FloatArray) -> FloatArray:
        """The output for the given input values."""

    @abstractmethod
    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        """grad·∂output/∂input for every input (None where `wants` is False), each of its input's shape."""


# ---- Binary elementwise operators (with NumPy broadcasting) -------------------------------------

PairVjp = Callable[[FloatArray, FloatArray, FloatArray, FloatArray], FloatArray]  # (grad, a, b, y) -> grad·∂y/∂·


def pairwise(op_name: str, function: Callable[[FloatArray, FloatArray], FloatArray], vjp_a: PairVjp,
             vjp_b: PairVjp) -> type[Operator]:
    """The operator applying `function` to every pair of elements of a and b broadcast together; each
    input's VJP is formed only when it wants one, and summed back to its shape (`unbroadcast`)."""

    class Pairwise(Operator):
        name = op_name

        def forward(self, *values: FloatArray) -> FloatArray:
            return function(*values)

        def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray,
                wants: tuple[bool, ...]) -> Grads:
            a, b = values
            return (unbroadcast(vjp_a(grad, a, b, output), a.shape) if wants[0] else None,
                    unbroadcast(vjp_b(grad, a, b, output), b.shape) if wants[1] else None)

    Pairwise.__name__ = Pairwise.__qualname__ = op_name.title()
    return Pairwise


def larger_share(a: FloatArray, b: FloatArray) -> FloatArray:
    """1 where a is the larger, 0 where b is, ½ where they tie (each gets half, as in JAX and PyTorch)."""
    return np.asarray((a > b) + 0.5 * (a == b))


Add = pairwise("add", np.add, lambda g, a, b, y: g, lambda g, a, b, y: g)
Subtract = pairwise("subtract", np.subtract, lambda g, a, b, y: g, lambda g, a, b, y: -g)
Multiply = pairwise("multiply", np.multiply, lambda g, a, b, y: g * b, lambda g, a, b, y: g * a)
Divide = pairwise("divide", np.divide, lambda g, a, b, y: g / b,
                  lambda g, a, b, y: -g * y / b)  # -a/b² = -(a/b)/b
# a ** b; the gradient w.r.t. b (a^b·ln a) is 0 where a ≤ 0.
Power = pairwise("power", np.power, lambda g, a, b, y: g * b * np.power(a, b - 1),
                 lambda g, a, b, y: g * y * np.log(np.where(a > 0, a, 1.0)))
Maximum = pairwise("maximum", np.maximum, lambda g, a, b, y: g * larger_share(a, b),
                   lambda g, a, b, y: g * (1 - larger_share(a, b)))


# ---- Elementwise functions of one input ----------------------------------------------------------

ElementVjp = Callable[[FloatArray, FloatArray, FloatArray], FloatArray]  # (grad, x, y = f(x)) -> grad·f′(x)


def elementwise(op_name: str, function: Callable[[FloatArray], FloatArray], vjp: ElementVjp) -> type[Operator]:
    """The operator applying `function` to every element; its VJP is written from x and y = f(x)."""

    class Elementwise(Operator):
        name = op_name

        def forward(self, *values: FloatArray) -> FloatArray:
            return function(values[0])

        def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray,
                wants: tuple[bool, ...]) -> Grads:
            return (vjp(grad, values[0], output),)

    Elementwise.__name__ = Elementwise.__qualname__ = op_name.title().replace("_", "")
    return Elementwise


def stable_sigmoid(x: FloatArray) -> FloatArray:
    """1 / (1 + e^-x), written so that no exp overflows: e = e^-|x| ≤ 1 on both branches."""
    e = np.exp(-np.abs(x))
    return np.asarray(np.where(x >= 0, 1 / (1 + e), e / (1 + e)))


Square = elementwise("square", np.square, lambda g, x, y: g * 2 * x)
Sin = elementwise("sin", np.sin, lambda g, x, y: g * np.cos(x))
Cos = elementwise("cos", np.cos, lambda g, x, y: -g * np.sin(x))
Exp = elementwise("exp", np.exp, lambda g, x, y: g * y)  # d exp(x) = exp(x): reuse the forward value
Log = elementwise("log", np.log, lambda g, x, y: g / x)
# max(x, 0); like JAX and PyTorch, the derivative at exactly 0 is taken as 0.
Relu = elementwise("relu", lambda x: np.maximum(x, 0), lambda g, x, y: g * (x > 0))
Tanh = elementwise("tanh", np.tanh, lambda g, x, y: g * (1 - y * y))  # tanh' = 1 - tanh²
Sigmoid = elementwise("sigmoid", stable_sigmoid, lambda g, x, y: g * y * (1 - y))
Sqrt = elementwise("sqrt", np.sqrt, lambda g, x, y: g / (2 * y))
# |x|; its derivative sign(x) is 0 at exactly 0, as in JAX and PyTorch.
Abs = elementwise("abs", np.abs, lambda g, x, y: g * np.sign(x))


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
