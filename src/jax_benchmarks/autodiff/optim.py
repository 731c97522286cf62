"""Plain gradient descent on a module's parameters."""

from __future__ import annotations

from jax_benchmarks.autodiff.graph import Node
from jax_benchmarks.autodiff.module import Module


def sgd_step(module: Module, loss: Node, learning_rate: float) -> None:
    """p ← p − lr·∂loss/∂p for every parameter `loss` uses (runs backward on `loss` first).

    One backward pass computes every gradient; each update is then a lookup. A
    parameter the loss does not use (a sub-module this loss never called) keeps its value.
    """
    loss.backward()
    for param in module.parameters().values():
        if loss.uses(param):
            param.value = param.value - learning_rate * loss.grad(param)
