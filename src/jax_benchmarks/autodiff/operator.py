"""Operators: functions whose forward pass and vector-Jacobian product we write by hand.

Applying an operator to operands (nodes, Parameters or plain numbers/arrays)
grounds the operands in the current call's graph and returns a new
OperatorNode. Plain values become constant leaves of the same dtype as the
node operands, so 0.2 * x stays float32 when x is float32.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from jax_benchmarks.autodiff.nodes import InputNode, Node, OperatorNode, new_call_id
from jax_benchmarks.autodiff.parameter import FloatArray, Parameter, as_float_array
from jax_benchmarks.autodiff.session import active_session

Operand = Node | Parameter | npt.ArrayLike
Grads = tuple[FloatArray | None, ...]


class Operator(ABC):
    """One differentiable primitive. Subclasses set `name` and implement `forward` and `vjp`."""

    name: ClassVar[str]

    @abstractmethod
    def forward(self, *values: FloatArray) -> FloatArray:
        """The output for the given input values."""

    @abstractmethod
    def vjp(self, grad: FloatArray, values: tuple[FloatArray, ...], output: FloatArray, wants: tuple[bool, ...]) -> Grads:
        """grad·∂output/∂input for every input (None where `wants` is False), each of its input's shape."""

    def __call__(self, *operands: Operand) -> OperatorNode:
        call_id = _common_call_id(operands)
        dtype = _node_dtype(operands)
        inputs = tuple(_ground(operand, call_id, dtype) for operand in operands)
        value = as_float_array(self.forward(*(node.value for node in inputs)))
        return OperatorNode(self, inputs, value, call_id)


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


def _node_dtype(operands: tuple[Operand, ...]) -> np.dtype[np.floating]:
    dtypes = [operand.value.dtype for operand in operands if isinstance(operand, Node | Parameter)]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _ground(operand: Operand, call_id: int, dtype: np.dtype[np.floating]) -> Node:
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
