"""One call's computational graph: its values, its nodes, the operators on them, and backprop.

`Operable` is the one class Python's operators, NumPy's ufuncs and the method forms are defined on
(`x * w`, `np.ones(3) @ x`, `np.exp(x)`, `x.sum()`, `x.T`); its two kinds are a `Parameter` (a named,
trainable value a Module owns between calls) and a `Node` (a value computed during one call). Each
operator method records one `OperatorNode` through `apply`, which runs the operator's forward pass
(jax_benchmarks.autodiff.operators) on its operands' values.

Every call of a Module creates fresh nodes tagged with that call's id (`CallSession`), so two calls
never share a node and gradients of one call cannot leak into another. `backward()` computes the
gradient of every node in one reverse pass and indexes the leaves; `grad(...)` afterwards is a
dictionary lookup, not a walk of the graph.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from jax_benchmarks.errors import first_line
from jax_benchmarks.autodiff.arrays import FloatArray, OperandError, as_float_array
from jax_benchmarks.autodiff.operators import (
    Abs, Add, Axis, Cos, Divide, Exp, Log, LogSoftmax, Matmul, Max, Maximum, Mean, Multiply, Operator, Power,
    Relu, Reshape, Sigmoid, Sin, Sqrt, Square, Subtract, Sum, Tanh, Transpose,
)

LeafKind = Literal["input", "param", "const"]

# The NumPy ufuncs a node answers: `np.array(...) * node` calls np.multiply(array, node), which NumPy
# hands to the node's __array_ufunc__ (NEP 13) instead of converting the node to an array.
UFUNCS: dict[np.ufunc, Callable[[], Operator]] = {
    np.add: Add, np.subtract: Subtract, np.multiply: Multiply, np.true_divide: Divide, np.power: Power,
    np.matmul: Matmul, np.maximum: Maximum, np.square: Square, np.sin: Sin, np.cos: Cos, np.exp: Exp,
    np.log: Log, np.tanh: Tanh, np.sqrt: Sqrt, np.absolute: Abs,
}


def binary(operator: Callable[[], Operator]) -> Callable[[Operand, Operand], OperatorNode]:
    """`a OP b` as a function (and as the method `__op__` of `a`): the operator on (a, b)."""
    return lambda a, b: apply(operator(), a, b)


def reflected(operator: Callable[[], Operator]) -> Callable[[Operand, Operand], OperatorNode]:
    """The method `__rop__` of `b`, for `a OP b` when `a` does not know the operation: the operator on (a, b)."""
    return lambda b, a: apply(operator(), a, b)


def unary(operator: Callable[[], Operator]) -> Callable[[Operand], OperatorNode]:
    """`f(x)` as a function (and as the method `x.f()`): the operator on x."""
    return lambda x: apply(operator(), x)


class Operable:
    """Base of Node and Parameter: Python's operators, NumPy's ufuncs and method forms of the operators."""

    __add__, __radd__ = binary(Add), reflected(Add)
    __sub__, __rsub__ = binary(Subtract), reflected(Subtract)
    __mul__, __rmul__ = binary(Multiply), reflected(Multiply)
    __truediv__, __rtruediv__ = binary(Divide), reflected(Divide)
    __pow__, __rpow__ = binary(Power), reflected(Power)
    __matmul__, __rmatmul__ = binary(Matmul), reflected(Matmul)
    __abs__, exp, log, sqrt = unary(Abs), unary(Exp), unary(Log), unary(Sqrt)
    sin, cos, tanh, sigmoid, relu = unary(Sin), unary(Cos), unary(Tanh), unary(Sigmoid), unary(Relu)

    def __neg__(self) -> OperatorNode:
        return apply(Multiply(), -1.0, self)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """An engine node for the ufuncs in UFUNCS (and np.negative); NotImplemented (NumPy raises
        TypeError) for the rest."""
        if method != "__call__" or kwargs:  # out=, where=, reduce(): not differentiable here
            return NotImplemented
        if ufunc is np.negative:
            return apply(Multiply(), -1.0, *inputs)
        operator = UFUNCS.get(ufunc)
        return NotImplemented if operator is None else apply(operator(), *inputs)

    def sum(self, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
        return apply(Sum(axis, keepdims), self)

    def mean(self, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
        return apply(Mean(axis, keepdims), self)

    def max(self, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
        return apply(Max(axis, keepdims), self)

    def reshape(self, *shape: Any) -> OperatorNode:
        """x.reshape(2, 3) or x.reshape((2, 3)), as NumPy."""
        return apply(Reshape(tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape), self)

    def transpose(self, *axes: Any) -> OperatorNode:
        """x.transpose() and x.T reverse the axes; x.transpose(1, 0, 2) or x.transpose((1, 0, 2)) permutes them."""
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = tuple(axes[0])
        return apply(Transpose(tuple(axes) or None), self)

    @property
    def T(self) -> OperatorNode:  # noqa: N802 - NumPy's name
        return self.transpose()

    def log_softmax(self, axis: int = -1) -> OperatorNode:
        return apply(LogSoftmax(axis), self)


class Parameter(Operable):
    """A named value owned by a Module; every call grounds it as one leaf node of that call's graph.

    The value is replaced (not mutated) by training, so graphs of earlier calls keep
    the value they were computed with. Inside a Module call, arithmetic on it
    (`p * p`, `x @ p`, `p.tanh()`) builds nodes of that call's graph.
    """

    def __init__(self, name: str, value: npt.ArrayLike) -> None:
        self.name = name
        self.value: FloatArray = as_float_array(value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.value.shape

    def __repr__(self) -> str:
        return f"Parameter({self.name!r}, shape={self.shape})"


# ------------------------------------------------------------------------------------------- nodes ---

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
        backpropagate([*self._index.below, self], start)

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

    def __init__(self, name: str, value: FloatArray, call_id: int, kind: LeafKind,
                 source: Parameter | None = None) -> None:
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
        super().__init__(operator.name, value, call_id,
                         requires_grad=operator.differentiable and any(p.requires_grad for p in inputs))
        self.operator = operator
        self.inputs = inputs

    @property
    def parents(self) -> tuple[Node, ...]:
        return self.inputs

    def input_grads(self, grad: FloatArray) -> tuple[FloatArray | None, ...]:
        wants = tuple(parent.requires_grad for parent in self.inputs)
        values = tuple(parent.value for parent in self.inputs)
        return self.operator.vjp(grad, values, self.value, wants)


Operand = Operable | npt.ArrayLike  # what an operator takes: a Node or a Parameter, or plain numbers and arrays


# ---------------------------------------------------------------------------------------- backprop ---

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


class GraphIndex:
    """One output's graph, walked once: the differentiable nodes below the output in order, and its
    leaves by key.

    It never holds the output itself (the last node of `order`): the output holds its index, and nodes
    point only down to their inputs, so holding the output would be the one reference cycle, and the whole
    graph (every activation) would outlive the output until Python's cycle collector ran, which the
    timing core pauses while it times.
    """

    def __init__(self, order: list[Node]) -> None:
        self.members = {id(node) for node in order}
        self.below = [node for node in order[:-1] if node.requires_grad]
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


# ----------------------------------------------------------------------------------- call session ---
# The outermost Module call opens a session with a fresh call id; nested Module calls join it, so a
# composite model records ONE flat graph. Within a session a Parameter is grounded once: a module called
# twice (weight sharing) feeds the same leaf twice, and backprop sums both contributions into it.

@dataclass
class CallSession:
    call_id: int
    param_nodes: dict[int, InputNode] = field(default_factory=dict)  # id(Parameter) -> its leaf

    def ground(self, param: Parameter) -> InputNode:
        """The leaf holding `param` in this call (created on first use)."""
        node = self.param_nodes.get(id(param))
        if node is None:
            node = InputNode(param.name, param.value, self.call_id, kind="param", source=param)
            self.param_nodes[id(param)] = node
        return node


_active: ContextVar[CallSession | None] = ContextVar("autodiff_call_session", default=None)


def active_session() -> CallSession | None:
    return _active.get()


@contextmanager
def call_session() -> Iterator[CallSession]:
    """Join the active session, or open a new one (a new graph) when there is none."""
    session = _active.get()
    if session is not None:
        yield session
        return
    session = CallSession(new_call_id())
    token = _active.set(session)
    try:
        yield session
    finally:
        _active.reset(token)


# ------------------------------------------------------------------------------------------- apply ---

def apply(operator: Operator, *operands: Operand) -> OperatorNode:
    """The operator on its operands, recorded as a new node of the current call's graph.

    Operands are grounded in that graph: nodes as they are, Parameters as the call's leaf for them, plain
    numbers and arrays as constant leaves of the node operands' dtype (so 0.2 * x stays float32 when x is
    float32).
    """
    call_id = _common_call_id(operands)
    dtype = _node_dtype(operands)
    inputs = tuple(_ground(operand, call_id, dtype) for operand in operands)
    try:
        value = as_float_array(operator.forward(*(node.value for node in inputs)))
    except OperandError:
        raise
    except ValueError as exc:  # NumPy's broadcasting or matmul message, turned into one line naming the operator
        shapes = ", ".join(str(node.shape) for node in inputs)
        raise OperandError(f"{operator.name}: operands of shapes {shapes} do not fit: {first_line(exc)}") from None
    return OperatorNode(operator, inputs, value, call_id)


def _common_call_id(operands: tuple[Operand, ...]) -> int:
    """The graph the new node belongs to; mixing two calls' graphs is refused."""
    session = active_session()
    ids = {operand.call_id for operand in operands if isinstance(operand, Node)}
    if session is not None:
        ids.add(session.call_id)
    if len(ids) > 1:
        raise ValueError(
            "operands come from different calls' graphs; compose the computation inside one Module.call"
        )
    if ids:
        return ids.pop()
    if any(isinstance(operand, Parameter) for operand in operands):
        raise RuntimeError("a Parameter can only be used inside a Module call")
    return new_call_id()


def _node_dtype(operands: tuple[Operand, ...]) -> np.dtype[np.floating[Any]]:
    dtypes = [operand.value.dtype for operand in operands if isinstance(operand, Node | Parameter)]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _ground(operand: Operand, call_id: int, dtype: np.dtype[np.floating[Any]]) -> Node:
    if isinstance(operand, Node):
        return operand
    if isinstance(operand, Parameter):
        session = active_session()
        assert session is not None  # _common_call_id refused a Parameter outside a call
        return session.ground(operand)
    value = np.asarray(operand)
    if not np.issubdtype(value.dtype, np.floating) or value.ndim == 0:
        value = value.astype(dtype)  # Python numbers take the dtype of the data they meet
    return InputNode("const", as_float_array(value), call_id, kind="const")
