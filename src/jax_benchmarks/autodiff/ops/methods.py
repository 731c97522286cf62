"""Python's operators, NumPy's ufuncs and method forms on Node and Parameter, attached once.

Operators make nodes and nodes overload operators: this module closes that
cycle in one place. It imports every operator, then attaches the methods that
`Operable` declares (for mypy) to `Operable`, the common base of Node and
Parameter. `jax_benchmarks.autodiff` imports it, so the methods exist before the
first node does (any import of an engine module imports the package first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jax_benchmarks.autodiff.nodes import Node, OperatorNode
from jax_benchmarks.autodiff.operable import Operable
from jax_benchmarks.autodiff.operator import Operand
from jax_benchmarks.autodiff.parameter import Parameter
from jax_benchmarks.autodiff.ops.arithmetic import add, divide, maximum, multiply, power, square, subtract
from jax_benchmarks.autodiff.ops.linalg import matmul
from jax_benchmarks.autodiff.ops.reductions import Axis, log_softmax, max, mean, sum
from jax_benchmarks.autodiff.ops.shape import reshape, transpose
from jax_benchmarks.autodiff.ops.unary import abs, cos, exp, log, relu, sigmoid, sin, sqrt, tanh

Binary = Callable[[Operand, Operand], OperatorNode]
Value = Node | Parameter  # what `self` is: the two subclasses of Operable

# The NumPy ufuncs a node answers: `np.array(...) * node` calls np.multiply(array, node), which
# NumPy hands to the node's __array_ufunc__ (NEP 13) instead of converting the node to an array.
UFUNCS: dict[np.ufunc, Callable[..., OperatorNode]] = {
    np.add: add, np.subtract: subtract, np.multiply: multiply, np.true_divide: divide, np.power: power,
    np.matmul: matmul, np.maximum: maximum, np.square: square, np.negative: lambda x: multiply(-1.0, x),
    np.sin: sin, np.cos: cos, np.exp: exp, np.log: log, np.tanh: tanh, np.sqrt: sqrt, np.absolute: abs,
}


def _array_ufunc(self: Value, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """An engine node for the ufuncs in UFUNCS; NotImplemented (NumPy raises TypeError) for the rest."""
    op = UFUNCS.get(ufunc)
    if op is None or method != "__call__" or kwargs:  # out=, where=, reduce(): not differentiable here
        return NotImplemented
    return op(*inputs)


def _forward(op: Binary) -> Callable[[Value, Operand], OperatorNode]:
    def method(self: Value, other: Operand) -> OperatorNode:
        return op(self, other)
    return method


def _reflected(op: Binary) -> Callable[[Value, Operand], OperatorNode]:
    def method(self: Value, other: Operand) -> OperatorNode:
        return op(other, self)
    return method


def _reduction(op: Callable[[Operand, Axis, bool], OperatorNode]) -> Callable[[Value, Axis, bool], OperatorNode]:
    def method(self: Value, axis: Axis = None, keepdims: bool = False) -> OperatorNode:
        return op(self, axis, keepdims)
    return method


def _unary(op: Callable[[Operand], OperatorNode]) -> Callable[[Value], OperatorNode]:
    def method(self: Value) -> OperatorNode:
        return op(self)
    return method


def _reshape(self: Value, *shape: Any) -> OperatorNode:
    """x.reshape(2, 3) or x.reshape((2, 3)), as NumPy."""
    return reshape(self, tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape)


def _transpose(self: Value, *axes: Any) -> OperatorNode:
    """x.transpose() and x.T reverse the axes; x.transpose(1, 0, 2) or x.transpose((1, 0, 2)) permutes them."""
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = tuple(axes[0])
    return transpose(self, axes or None)


def _log_softmax(self: Value, axis: int = -1) -> OperatorNode:
    return log_softmax(self, axis)


METHODS: dict[str, Any] = {
    "__add__": _forward(add), "__radd__": _reflected(add),
    "__sub__": _forward(subtract), "__rsub__": _reflected(subtract),
    "__mul__": _forward(multiply), "__rmul__": _reflected(multiply),
    "__truediv__": _forward(divide), "__rtruediv__": _reflected(divide),
    "__pow__": _forward(power), "__rpow__": _reflected(power),
    "__matmul__": _forward(matmul), "__rmatmul__": _reflected(matmul),
    "__neg__": lambda self: multiply(-1.0, self),
    "__abs__": _unary(abs),
    "__array_ufunc__": _array_ufunc,
    "sum": _reduction(sum), "mean": _reduction(mean), "max": _reduction(max),
    "reshape": _reshape, "transpose": _transpose, "T": property(_transpose),
    "exp": _unary(exp), "log": _unary(log), "sqrt": _unary(sqrt), "sin": _unary(sin), "cos": _unary(cos),
    "tanh": _unary(tanh), "sigmoid": _unary(sigmoid), "relu": _unary(relu),
    "log_softmax": _log_softmax,
}

for _name, _method in METHODS.items():
    setattr(Operable, _name, _method)
