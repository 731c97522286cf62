"""Reverse-mode accumulation over one call's DAG.

This module walks nodes through their `parents`, `requires_grad` and
`input_grads` only, so it needs no import of the node classes (which call it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jax_benchmarks.autodiff.nodes import Node
    from jax_benchmarks.autodiff.parameter import FloatArray


def graph_nodes(root: Node, only_differentiable: bool = False) -> list[Node]:
    """Every node `root` depends on, each once, parents before children (a topological order).

    Iterative depth-first search: a deep graph (a long loop of operators) must
    not hit Python's recursion limit.
    """
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen or (only_differentiable and not node.requires_grad):
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((parent, False) for parent in reversed(node.parents) if id(parent) not in seen)
    return order


def backpropagate(order: list[Node], seed: FloatArray) -> None:
    """Push `seed` from the last node of `order` (the output) down to every differentiable node.

    `order` is topological (parents first), so walking it backwards reaches a
    node only after every consumer has sent its contribution: the contributions
    of a node used several times (a shared input, a parameter of a module called
    twice) are summed before the node passes its gradient on.
    """
    pending: dict[int, FloatArray] = {id(order[-1]): seed}
    for node in reversed(order):
        grad = pending.pop(id(node), None)
        if grad is None:
            continue
        node.accumulate(grad)
        for parent, contribution in zip(node.parents, node.input_grads(grad), strict=True):
            if contribution is None or not parent.requires_grad:
                continue
            if contribution.shape != parent.shape:  # a VJP bug must not pass silently
                raise AssertionError(f"{node.name}: gradient of shape {contribution.shape} for input {parent.shape}")
            previous = pending.get(id(parent))
            pending[id(parent)] = contribution if previous is None else previous + contribution
