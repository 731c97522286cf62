"""Counting a flax.nnx model's trainable parameters, for every group that builds one."""

from __future__ import annotations

import jax
from flax import nnx


def parameter_count(model: nnx.Module) -> int:
    """Scalars in the model's `nnx.Param` variables (weights and biases; no optimizer or batch state)."""
    return sum(int(p.size) for p in jax.tree.leaves(nnx.state(model, nnx.Param)))
