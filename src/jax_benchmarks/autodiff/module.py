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

import numpy as np

from jax_benchmarks.autodiff.arrays import FloatArray, as_float_array
from jax_benchmarks.autodiff.graph import CallSession, InputNode, Node, Operand, Parameter, active_session, call_session


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
        return InputNode(name, as_float_array(np.asarray(arg)), session.call_id, kind="input")

    # ---------------------------------------------------------- parameters ---

    def param(self, name: str) -> Parameter:
        """This module's own parameter `name`, or a sub-module's as "sub.name"."""
        params = self.parameters()
        if name not in params:
            raise KeyError(f"{self.name} has no parameter {name!r}; it has {', '.join(params) or 'none'}")
        return params[name]

    def parameters(self) -> dict[str, Parameter]:
        """Every parameter reachable from this module, each object once, named by its path.

        A Parameter attribute is named by its own name ("w"), one in a list,
        tuple or dict by the container's attribute and its index or key
        ("weights.0"), and a sub-module's by the sub-module's path ("hidden.w",
        "layers.1.w"). Two different parameters with one path are refused.
        """
        found: dict[str, Parameter] = {}
        seen: set[int] = set()
        for attr, value in vars(self).items():
            if isinstance(value, Parameter):
                _collect(value.name, value, found, seen)
            else:
                _collect(attr, value, found, seen)
        return found


def _collect(path: str, value: object, found: dict[str, Parameter], seen: set[int]) -> None:
    """Add the parameters held by `value` (a Parameter, a Module, or a list/tuple/dict of them) under `path`."""
    if isinstance(value, Parameter):
        if id(value) in seen:
            return
        if path in found:
            raise ValueError(f"two parameters are named {path!r}; give them different names")
        seen.add(id(value))
        found[path] = value
    elif isinstance(value, Module):
        for name, param in value.parameters().items():
            _collect(f"{path}.{name}", param, found, seen)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _collect(f"{path}.{index}", item, found, seen)
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect(f"{path}.{key}", item, found, seen)


class Function(Module):
    """A module from a plain function of nodes: `Function(lambda x: 0.2 * x + sin(x), inputs=("x",))`."""

    def __init__(self, fn: Callable[..., Node], inputs: Sequence[str], name: str | None = None) -> None:
        super().__init__(inputs, name or getattr(fn, "__name__", "function"))
        self._fn = fn

    def call(self, *inputs: Any) -> Node:
        return self._fn(*inputs)


Wrt = str | Parameter


class Gradient:
    """`grad(f, wrt)`: called with new inputs, it calls f on them (a fresh graph), runs one backward pass and
    returns d f / d wrt: an array, or a tuple of arrays when `wrt` is a sequence. For a non-scalar output
    the gradient is that of the output's sum, which for an elementwise f is f′ at every point."""

    def __init__(self, f: Module, wrt: Wrt | Sequence[Wrt]) -> None:
        self.f = f
        self.many = not isinstance(wrt, str | Parameter)
        self.wrt: tuple[Wrt, ...] = tuple(wrt) if not isinstance(wrt, str | Parameter) else (wrt,)
        for target in self.wrt:
            if isinstance(target, str) and target not in f.input_names:
                raise KeyError(f"{f.name} has no input named {target!r}; its inputs: {', '.join(f.input_names)}")

    def __call__(self, *args: Operand, **kwargs: Operand) -> FloatArray | tuple[FloatArray, ...]:
        """Inputs by position, or by name (zkynet's `grad_fn('w')(x=3, w=1)`)."""
        if kwargs:
            unknown = sorted(set(kwargs) - set(self.f.input_names[len(args):]))
            missing = [name for name in self.f.input_names[len(args):] if name not in kwargs]
            if unknown or missing:
                raise TypeError(f"{self.f.name} takes the inputs ({', '.join(self.f.input_names)}); "
                                f"unknown: {unknown or 'none'}, missing: {missing or 'none'}")
            args = (*args, *(kwargs[name] for name in self.f.input_names[len(args):]))
        output = self.f(*args)
        output.backward()
        grads = tuple(output.grad(target) for target in self.wrt)
        return grads if self.many else grads[0]


def grad(f: Module, wrt: Wrt | Sequence[Wrt] | None = None) -> Gradient:
    """The gradient of `f` with respect to an input (by name), a Parameter, or several, as a function of
    f's inputs (jax.grad(f, argnums), zkynet's grad_fn); by default its first input, as jax.grad's."""
    return Gradient(f, f.input_names[0] if wrt is None else wrt)
