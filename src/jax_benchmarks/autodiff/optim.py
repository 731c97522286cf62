"""Optimizers on a module's parameters: plain gradient descent, SGD with momentum (and Nesterov), Adam and
RMSprop, each the update rule of its torch.optim namesake (the tests compare them step by step).

An optimizer is made once for a module (`Adam(model, lr=1e-3)`) and keeps its state (moments, momentum
buffers) per parameter between steps; `step(loss)` runs backward on `loss` and updates every parameter the
loss uses. A parameter's value is replaced, never mutated, so graphs of earlier calls keep their values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from jax_benchmarks.autodiff.arrays import FloatArray
from jax_benchmarks.autodiff.graph import Node
from jax_benchmarks.autodiff.module import Module


def sgd_step(module: Module, loss: Node, learning_rate: float) -> None:
    """p ← p − lr·∂loss/∂p for every parameter `loss` uses (runs backward on `loss` first).

    One backward pass computes every gradient; each update is then a lookup. A
    parameter the loss does not use (a sub-module this loss never called) keeps its value.
    """
    SGD(module, learning_rate).step(loss)


class Optimizer(ABC):
    """State per parameter (by the parameter's path in the module), one update rule."""

    def __init__(self, module: Module, lr: float) -> None:
        if not lr > 0:
            raise ValueError(f"{type(self).__name__}: the learning rate must be > 0, got {lr}")
        self.module = module
        self.lr = lr
        self.steps = 0
        self.state: dict[str, dict[str, FloatArray]] = {}

    def step(self, loss: Node) -> None:
        """One update of every parameter `loss` uses (after one backward pass on it)."""
        loss.backward()
        self.steps += 1
        for name, param in self.module.parameters().items():
            if loss.uses(param):
                param.value = self.update(param.value, loss.grad(param), self.state.setdefault(name, {}))

    @abstractmethod
    def update(self, value: FloatArray, grad: FloatArray, state: dict[str, FloatArray]) -> FloatArray:
        """The parameter's new value; `state` is this parameter's, updated in place."""


class SGD(Optimizer):
    """torch.optim.SGD (dampening 0): b ← μ·b + g (b = g on the first step); the step is b, or g + μ·b
    with Nesterov; p ← p − lr·step."""

    def __init__(self, module: Module, lr: float, momentum: float = 0.0, nesterov: bool = False) -> None:
        super().__init__(module, lr)
        if nesterov and momentum <= 0:
            raise ValueError("SGD: Nesterov momentum needs a momentum > 0")
        self.momentum = momentum
        self.nesterov = nesterov

    def update(self, value: FloatArray, grad: FloatArray, state: dict[str, FloatArray]) -> FloatArray:
        direction = grad
        if self.momentum:
            buffer = state.get("momentum")
            buffer = grad if buffer is None else self.momentum * buffer + grad
            state["momentum"] = buffer
            direction = grad + self.momentum * buffer if self.nesterov else buffer
        return value - self.lr * direction


class Adam(Optimizer):
    """torch.optim.Adam: m ← β1·m + (1−β1)·g, v ← β2·v + (1−β2)·g², p ← p − lr/(1−β1ᵗ) · m / (√v/√(1−β2ᵗ) + ε)."""

    def __init__(self, module: Module, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        super().__init__(module, lr)
        self.beta1, self.beta2 = betas
        self.eps = eps

    def update(self, value: FloatArray, grad: FloatArray, state: dict[str, FloatArray]) -> FloatArray:
        m = self.beta1 * state.get("m", np.zeros_like(grad)) + (1 - self.beta1) * grad
        v = self.beta2 * state.get("v", np.zeros_like(grad)) + (1 - self.beta2) * grad * grad
        state["m"], state["v"] = m, v
        correction1 = 1 - self.beta1**self.steps
        correction2 = 1 - self.beta2**self.steps
        denominator = np.sqrt(v) / np.sqrt(correction2) + self.eps
        return np.asarray(value - (self.lr / correction1) * (m / denominator), dtype=value.dtype)


class RMSprop(Optimizer):
    """torch.optim.RMSprop (not centred): s ← α·s + (1−α)·g²; d = g / (√s + ε); with momentum μ,
    b ← μ·b + d and the step is b; p ← p − lr·step."""

    def __init__(self, module: Module, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 momentum: float = 0.0) -> None:
        super().__init__(module, lr)
        self.alpha = alpha
        self.eps = eps
        self.momentum = momentum

    def update(self, value: FloatArray, grad: FloatArray, state: dict[str, FloatArray]) -> FloatArray:
        square = self.alpha * state.get("square", np.zeros_like(grad)) + (1 - self.alpha) * grad * grad
        state["square"] = square
        direction = grad / (np.sqrt(square) + self.eps)
        if self.momentum:
            direction = self.momentum * state.get("momentum", np.zeros_like(grad)) + direction
            state["momentum"] = direction
        return np.asarray(value - self.lr * direction, dtype=value.dtype)
