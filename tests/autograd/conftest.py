"""JAX in float64 for the engine comparisons (scoped: other tests keep JAX's defaults)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def x64() -> Iterator[None]:
    import jax

    with jax.enable_x64(True):
        yield
