"""Plain gradient descent on a module's parameters."""

from __future__ import annotations

from src.autograd.engine.module import Module
from src.autograd.engine.nodes import Node


def sgd_step(module: Module, loss: Node, learning_rate: float) -> None:
    """p ← p − lr·∂loss/∂p for every parameter (runs backward on `loss` first)."""
    loss.backward()
    for param in module.parameters().values():
        param.value = param.value - learning_rate * loss.grad(param)
