"""Nodes of one call's computational graph: leaves (inputs, parameters, constants) and operator nodes.

Every call of a Module creates fresh nodes tagged with that call's id, so two
calls never share a node and gradients of one call cannot leak into another.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from src.autograd.engine.parameter import FloatArray, Parameter, as_float_array

if TYPE_CHECKING:
    from src.autograd.engine.operator import Operator
    from src.autograd.engine.operator import Operand

LeafKind = Literal["input", "param", "const"]

_call_ids = itertools.count(1)


def new_call_id() -> int:
    return next(_call_ids)


class Node:
    """A value computed during one call, and (after `backward`) the gradient of the output w.r.t. it."""

    def __init__(self, name: str, value: FloatArray, call_id: int, requires_grad: bool) -> None:
        self.name = name
        self.value = value
        self.call_id = call_id
        self.requires_grad = requires_grad
        self.grad_value: FloatArray | None = None  # accumulated by backward()
        self._backward_done = False

    @property
    def parents(self) -> tuple[Node, ...]:
        return ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    @property
    def label(self) -> str:
        """What a plot of the graph shows: the variable or operator name."""
        return self.name

    def accumulate(self, grad: FloatArray) -> None:
        # A new array, never in place: a gradient may be a read-only broadcast view.
        self.grad_value = grad if self.grad_value is None else self.grad_value + grad

    # ------------------------------------------------------------ autodiff ---

    def backward(self, seed: npt.ArrayLike | None = None) -> None:
        """Accumulate d(self)/d(node) into every node of the graph that needs a gradient.

        A non-scalar output is seeded with ones (unless `seed` is given): the
        result is the gradient of sum(output), which for an elementwise function
        is the derivative at every point.
        """
        from src.autograd.engine.backprop import backpropagate

        if seed is None:
            start = np.ones_like(self.value)
        else:
            start = np.array(np.broadcast_to(as_float_array(seed, self.value.dtype), self.shape))
        backpropagate(self, start)
        self._backward_done = True

    def grad(self, wrt: Node | Parameter | str) -> FloatArray:
        """d(self)/d(wrt) after `backward()`: wrt is a node, a Parameter or an input's name."""
        from src.autograd.engine.backprop import find_leaf, graph_nodes

        if not self._backward_done:
            raise RuntimeError("call backward() on this output before asking for a gradient")
        if isinstance(wrt, Node):
            if all(node is not wrt for node in graph_nodes(self)):
                raise ValueError(f"node {wrt.name!r} is not part of this output's graph")
            node: Node | None = wrt
        else:
            node = find_leaf(self, wrt)
        if node is None:  # a parameter this call never used: its gradient is zero
            assert isinstance(wrt, Parameter)
            return np.zeros_like(wrt.value)
        return node.grad_value if node.grad_value is not None else np.zeros_like(node.value)

    # ---------------------------------------------- operator overloading ---

    def __add__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import add

        return add(self, other)

    def __radd__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import add

        return add(other, self)

    def __sub__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import subtract

        return subtract(self, other)

    def __rsub__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import subtract

        return subtract(other, self)

    def __mul__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import multiply

        return multiply(self, other)

    def __rmul__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import multiply

        return multiply(other, self)

    def __truediv__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import divide

        return divide(self, other)

    def __rtruediv__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import divide

        return divide(other, self)

    def __pow__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import power

        return power(self, other)

    def __neg__(self) -> OperatorNode:
        from src.autograd.engine.ops import multiply

        return multiply(-1.0, self)

    def __matmul__(self, other: Operand) -> OperatorNode:
        from src.autograd.engine.ops import matmul

        return matmul(self, other)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.label!r}, shape={self.shape}, call={self.call_id})"


class InputNode(Node):
    """A leaf: a call's input, a Module's parameter, or a constant (no gradient)."""

    def __init__(
        self,
        name: str,
        value: FloatArray,
        call_id: int,
        kind: LeafKind,
        source: Parameter | None = None,
    ) -> None:
        super().__init__(name, value, call_id, requires_grad=kind != "const")
        self.kind: LeafKind = kind
        self.source = source  # the Parameter this leaf grounds, for kind == "param"

    @property
    def label(self) -> str:
        if self.kind == "const" and self.value.size == 1:
            return f"{self.value.item():g}"
        return self.name


class OperatorNode(Node):
    """The output of one Operator applied to its parent nodes."""

    def __init__(self, operator: Operator, inputs: tuple[Node, ...], value: FloatArray, call_id: int) -> None:
        super().__init__(operator.name, value, call_id, requires_grad=any(p.requires_grad for p in inputs))
        self.operator = operator
        self.inputs = inputs

    @property
    def parents(self) -> tuple[Node, ...]:
        return self.inputs
