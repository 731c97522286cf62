"""JAX in float64 for the engine comparisons (scoped: other tests keep JAX's defaults)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture
def x64() -> Iterator[None]:
    import jax

    with jax.enable_x64(True):
        yield


@pytest.fixture(autouse=True)
def _xla_flags_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """`autograd jax|all` sets --xla-cpu-conv's flag in XLA_FLAGS when JAX is not loaded yet: a command run in
    this process leaves the variable as it found it for the tests after it (and their subprocesses)."""
    if "XLA_FLAGS" in os.environ:
        monkeypatch.setenv("XLA_FLAGS", os.environ["XLA_FLAGS"])
    else:
        monkeypatch.delenv("XLA_FLAGS", raising=False)
