"""xla workload in JAX (XLA on the CPU or a GPU), every step jit-compiled.

Every figure waits for the result (`jax_sync`): JAX dispatches work
asynchronously, and the seed's matmul read the clock before the product
existed, reporting 2000×2000 float64 in 0.015 s, 13× faster than this
machine can compute it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from src.core.devices import jax_device
from src.core.results import Run
from src.core.rng import RNG_Provider
from src.core.timing import jax_sync
from src.core.typed import typed_jit
from src.xla.settings import XlaSettings
from src.xla.workload import LinalgOps, run_workload


class JaxOps(LinalgOps[jax.Array, jax.Array]):
    name = "jax"
    compiles = True

    def __init__(self, settings: XlaSettings) -> None:
        super().__init__(settings)
        self.sync = jax_sync
        device = jax_device(settings.device_kind)
        rng = RNG_Provider(settings.seed)
        # One key per matrix, from --seed: every call regenerates the same pair.
        self.keys = (jax.device_put(rng.get(), device), jax.device_put(rng.get(), device))
        self.rng = f"jax.random ({jax.random.key_impl(self.keys[0])})"
        n, dtype = self.n, jnp.dtype(settings.dtype)

        def uniform_pair(key_a: jax.Array, key_b: jax.Array) -> tuple[jax.Array, jax.Array]:
            return (jax.random.uniform(key_a, (n, n), dtype=dtype),
                    jax.random.uniform(key_b, (n, n), dtype=dtype))

        def means(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
            return jnp.mean(a), jnp.mean(b)

        def sums(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
            return jnp.sum(a), jnp.sum(b)

        def matmul(a: jax.Array, b: jax.Array) -> jax.Array:
            # The precision of float32 products is the run's --precision (src/core/gpu_policy.py).
            return jnp.matmul(a, b)

        def inverse(c: jax.Array) -> jax.Array:
            c_inv: jax.Array = jnp.linalg.inv(c)  # already a jitted (untyped) function in jax
            return c_inv

        def residual(c: jax.Array, c_inv: jax.Array) -> jax.Array:
            # XLA fuses − I, |·| and max into one pass over the product.
            return jnp.max(jnp.abs(jnp.matmul(c, c_inv) - jnp.eye(n, dtype=dtype)))

        self._uniform_pair = typed_jit(uniform_pair)
        self._means = typed_jit(means)
        self._sums = typed_jit(sums)
        self._matmul = typed_jit(matmul)
        self._mean = typed_jit(jnp.mean)
        self._inverse = typed_jit(inverse)
        self._residual = typed_jit(residual)

    def uniform_pair(self) -> tuple[jax.Array, jax.Array]:
        return self._uniform_pair(*self.keys)

    def means(self, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self._means(a, b)

    def sums(self, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
        return self._sums(a, b)

    def matmul(self, a: jax.Array, b: jax.Array) -> jax.Array:
        return self._matmul(a, b)

    def mean(self, x: jax.Array) -> jax.Array:
        return self._mean(x)

    def inverse(self, c: jax.Array) -> jax.Array:
        return self._inverse(c)

    def residual(self, c: jax.Array, c_inv: jax.Array) -> jax.Array:
        return self._residual(c, c_inv)

    def to_float(self, x: jax.Array) -> float:
        return float(x)

    def dtype_of(self, x: jax.Array) -> str:
        return str(x.dtype)


def run(settings: XlaSettings, run: Run) -> None:
    # float64 needs x64 on before any array of the run exists. The scoped form
    # keeps it from leaking into whatever else runs in this process (other
    # groups, tests); float32 runs with it off, JAX's default.
    with jax.enable_x64(settings.dtype == "float64"):
        run_workload(JaxOps(settings), settings, run)
