"""The call session: which graph the nodes being created belong to.

The outermost Module call opens a session with a fresh call id; nested Module
calls join it, so a composite model records ONE flat graph. Within a session a
Parameter is grounded once: a module called twice (weight sharing) feeds the
same leaf twice, and backprop sums both contributions into it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from jax_benchmarks.autodiff.nodes import InputNode, new_call_id
from jax_benchmarks.autodiff.parameter import Parameter


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


_active: ContextVar[CallSession | None] = ContextVar("autograd_engine_session", default=None)


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
