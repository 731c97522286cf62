"""f(x) = 0.2·x + sin(x) + cos(2x) in JAX (jax.numpy)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def f(x: jax.Array) -> jax.Array:
    y: jax.Array = 0.2 * x + jnp.sin(x) + jnp.cos(2 * x)
    return y
