"""Nodes of one call's computational graph: leaves (inputs, parameters, constants) and operator nodes.

Every call of a Module creates fresh nodes tagged with that call's id, so two
calls never share a node and gradients of one call cannot leak into another.
`backward()` computes the gradient of every node in one reverse pass and indexes
the leaves; `grad(...)` afterwards is a dictionary lookup, not a walk of the graph.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

from jax_benchmarks.autodiff.backprop import backpropagate, graph_nodes
from jax_benchmarks.autodiff.operable import Operable
from jax_benchmarks.autodiff.parameter import FloatArray, Parameter, as_float_array

if TYPE_CHECKING:
    from jax_benchmarks.autodiff.operator import Operator

LeafKind = Literal["input", "param", "const"]

_call_ids = itertools.count(1)


def new_call_id() -> int:
    return next(_call_ids)


class Node(Operable):
    """A value computed during one call, and (after `backward`) the gradient of the output w.r.t. it."""

    def __init__(self, name: str, value: FloatArray, call_id: int, requires_grad: bool) -> None:
        self.name = name
        self.value = value
        self.call_id = call_id
        self.requires_grad = requires_grad
        self.grad_value: FloatArray | None = None  # accumulated by backward()
        self._index: GraphIndex | None = None  # set by this node's first backward()

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

    def input_grads(self, grad: FloatArray) -> tuple[FloatArray | None, ...]:
        """This node's gradient sent to each of its parents (none for a leaf)."""
        return ()

    # ------------------------------------------------------------ autodiff ---

    def backward(self, seed: npt.ArrayLike | None = None) -> None:
        """Accumulate d(self)/d(node) into every node of the graph that needs a gradient.

        A non-scalar output is seeded with ones (unless `seed` is given): the
        result is the gradient of sum(output), which for an elementwise function
        is the derivative at every point.
        """
        if not self.requires_grad:
            raise ValueError(
                f"{self.label!r} is computed from constants only (no Module input or Parameter below it): "
                "it has no gradient; pass the values that vary as inputs of a Module or Function"
            )
        if seed is None:
            start = np.ones_like(self.value)
        else:
            start = np.array(np.broadcast_to(as_float_array(seed, self.value.dtype), self.shape))
        if self._index is None:
            self._index = GraphIndex(graph_nodes(self))
        backpropagate(self._index.differentiable, start)

    def grad(self, wrt: Node | Parameter | str) -> FloatArray:
        """d(self)/d(wrt) after `backward()`: wrt is a node, a Parameter or an input's name.

        Raises when `wrt` is not reached by this output's graph (a Parameter this
        call never used, a node of another graph, a constant): its gradient does
        not exist, and a silent zero would hide the mistake.
        """
        if self._index is None:
            raise RuntimeError("call backward() on this output before asking for a gradient")
        node = self._index.find(wrt, self.label)
        return node.grad_value if node.grad_value is not None else np.zeros_like(node.value)

    def uses(self, param: Parameter) -> bool:
        """Whether this output's graph (after `backward()`) depends on `param`."""
        if self._index is None:
            raise RuntimeError("call backward() on this output before asking which parameters it uses")
        return id(param) in self._index.params

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

    def input_grads(self, grad: FloatArray) -> tuple[FloatArray | None, ...]:
        wants = tuple(parent.requires_grad for parent in self.inputs)
        values = tuple(parent.value for parent in self.inputs)
        return self.operator.vjp(grad, values, self.value, wants)


class GraphIndex:
    """One output's graph, walked once: its differentiable nodes in order, and its leaves by key."""

    def __init__(self, order: list[Node]) -> None:
        self.members = {id(node) for node in order}
        self.differentiable = [node for node in order if node.requires_grad]
        leaves = [node for node in order if isinstance(node, InputNode)]
        self.params = {id(leaf.source): leaf for leaf in leaves if leaf.source is not None}
        self.inputs: dict[str, list[InputNode]] = {}
        for leaf in leaves:
            if leaf.kind == "input":
                self.inputs.setdefault(leaf.name, []).append(leaf)

    def find(self, wrt: Node | Parameter | str, output: str) -> Node:
        """The node holding d(output)/d(wrt); raises when no path of the graph reaches `wrt`."""
        if isinstance(wrt, Parameter):
            leaf = self.params.get(id(wrt))
            if leaf is None:
                raise ValueError(
                    f"parameter {wrt.name!r} is not used by {output!r}: no path of its graph reaches it, so there is "
                    "no gradient (call the module that owns it inside this computation)"
                )
            return leaf
        if isinstance(wrt, str):
            found = self.inputs.get(wrt, [])
            if not found:
                names = ", ".join(sorted(self.inputs)) or "none"
                raise KeyError(f"no input named {wrt!r} in this graph; inputs: {names}")
            if len(found) > 1:
                raise ValueError(f"{len(found)} inputs are named {wrt!r}; pass the node itself")
            return found[0]
        if id(wrt) not in self.members:
            raise ValueError(f"node {wrt.label!r} is not part of {output!r}'s graph")
        if not wrt.requires_grad:
            raise ValueError(
                f"node {wrt.label!r} is computed from constants only: no input or parameter of {output!r} "
                "flows through it, so it has no gradient"
            )
        return wrt
