"""Modules: user functions composed of operators, owning named Parameters.

Calling a module grounds it: the inputs become leaf nodes, the operators in
`call` add nodes above them, and the output node is returned. The outermost
call owns the graph; modules called inside it (sub-models) add to the same
flat graph, so a node passed to two sub-modules is one shared node (input
sharing) and a sub-module called twice grounds its parameters once (weight
sharing): backprop then sums the contributions of both uses.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from src.autograd.engine.nodes import InputNode, Node
from src.autograd.engine.operator import Operand
from src.autograd.engine.parameter import Parameter, as_float_array
from src.autograd.engine.session import CallSession, active_session, call_session


class Module(ABC):
    """Subclasses declare their input names, set Parameters / sub-modules as attributes, and write `call`."""

    def __init__(self, inputs: Sequence[str], name: str | None = None) -> None:
        self.input_names = tuple(inputs)
        self.name = name or type(self).__name__
        self.last_call: Node | None = None  # output node of the most recent outermost call

    @abstractmethod
    def call(self, *inputs: Any) -> Node:
        """The forward pass, on nodes, with the engine's operators."""

    def __call__(self, *args: Operand) -> Node:
        if len(args) != len(self.input_names):
            raise TypeError(f"{self.name} takes {len(self.input_names)} inputs ({', '.join(self.input_names)}), got {len(args)}")
        outermost = active_session() is None  # only the outermost call owns (and keeps) the graph
        with call_session() as session:
            inputs = [self._ground_input(name, arg, session) for name, arg in zip(self.input_names, args, strict=True)]
            output = self.call(*inputs)
        if not isinstance(output, Node):
            raise TypeError(f"{self.name}.call must return a node built with the engine's operators")
        if outermost:
            self.last_call = output
        return output

    def _ground_input(self, name: str, arg: Operand, session: CallSession) -> Node:
        if isinstance(arg, Node):
            if arg.call_id != session.call_id:
                raise ValueError(
                    f"input {name!r} of {self.name} is a node of another call's graph; "
                    "call sub-modules inside one Module.call so they share a graph"
                )
            return arg  # input sharing: the very same node, used again
        if isinstance(arg, Parameter):
            return session.ground(arg)
        return InputNode(name, as_float_array(arg), session.call_id, kind="input")

    # ---------------------------------------------------------- parameters ---

    def param(self, name: str) -> Parameter:
        """This module's own parameter `name`, or a sub-module's as "sub.name"."""
        params = self.parameters()
        if name not in params:
            raise KeyError(f"{self.name} has no parameter {name!r}; it has {', '.join(params) or 'none'}")
        return params[name]

    def parameters(self) -> dict[str, Parameter]:
        """Every parameter reachable from this module, named by attribute path, each object once."""
        found: dict[str, Parameter] = {}
        seen: set[int] = set()
        self._collect(prefix="", found=found, seen=seen)
        return found

    def _collect(self, prefix: str, found: dict[str, Parameter], seen: set[int]) -> None:
        for attr, value in vars(self).items():
            if isinstance(value, Parameter) and id(value) not in seen:
                seen.add(id(value))
                found[prefix + value.name] = value
            elif isinstance(value, Module):
                value._collect(prefix + attr + ".", found, seen)


class Function(Module):
    """A module from a plain function of nodes: `Function(lambda x: 0.2 * x + sin(x), inputs=("x",))`."""

    def __init__(self, fn: Callable[..., Node], inputs: Sequence[str], name: str | None = None) -> None:
        super().__init__(inputs, name or getattr(fn, "__name__", "function"))
        self._fn = fn

    def call(self, *inputs: Any) -> Node:
        return self._fn(*inputs)
