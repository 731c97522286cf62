"""Reverse-mode accumulation over one call's DAG."""

from __future__ import annotations

from src.autograd.engine.nodes import InputNode, Node, OperatorNode
from src.autograd.engine.parameter import FloatArray, Parameter


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


def backpropagate(root: Node, seed: FloatArray) -> None:
    """Push `seed` from `root` down to every differentiable node, children before parents.

    Contributions of a node used several times (a shared input, a parameter of
    a module called twice) are summed before the node passes its gradient on.
    """
    pending: dict[int, FloatArray] = {id(root): seed}
    for node in reversed(graph_nodes(root, only_differentiable=True)):
        grad = pending.pop(id(node), None)
        if grad is None:
            continue
        node.accumulate(grad)
        if isinstance(node, OperatorNode):
            _send_to_parents(node, grad, pending)


def _send_to_parents(node: OperatorNode, grad: FloatArray, pending: dict[int, FloatArray]) -> None:
    wants = tuple(parent.requires_grad for parent in node.inputs)
    values = tuple(parent.value for parent in node.inputs)
    for parent, contribution in zip(node.inputs, node.operator.vjp(grad, values, node.value, wants), strict=True):
        if contribution is None or not parent.requires_grad:
            continue
        if contribution.shape != parent.shape:  # a VJP bug must not pass silently
            raise AssertionError(f"{node.name}: gradient of shape {contribution.shape} for input {parent.shape}")
        previous = pending.get(id(parent))
        pending[id(parent)] = contribution if previous is None else previous + contribution


def find_leaf(root: Node, wrt: Parameter | str) -> InputNode | None:
    """The leaf of `root`'s graph grounding a Parameter, or the input of that name.

    None for a Parameter the call never used; an unknown input name raises.
    """
    found = [node for node in graph_nodes(root) if isinstance(node, InputNode) and _matches(node, wrt)]
    if isinstance(wrt, Parameter):
        return found[0] if found else None
    if not found:
        names = sorted({n.name for n in graph_nodes(root) if isinstance(n, InputNode) and n.kind == "input"})
        raise KeyError(f"no input named {wrt!r} in this graph; inputs: {', '.join(names) or 'none'}")
    if len(found) > 1:
        raise ValueError(f"{len(found)} inputs are named {wrt!r}; pass the node itself")
    return found[0]


def _matches(node: InputNode, wrt: Parameter | str) -> bool:
    if isinstance(wrt, Parameter):
        return node.source is wrt
    return node.kind == "input" and node.name == wrt
