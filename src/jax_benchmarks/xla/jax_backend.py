"""xla workload in JAX (XLA on the CPU or a GPU), every step jit-compiled.

Every figure waits for the result (`jax_sync`): JAX dispatches work
asynchronously, and reading the clock before the product existed reported a
2000×2000 float64 matmul at 0.015 s on 2 cores, about 13× faster than the
hardware can compute it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jax_benchmarks.frameworks.descriptors import jax_device, jax_sync
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.measure.memory import jax_program
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.measure.timing import Sync
from jax_benchmarks.frameworks.typed import typed_jit
from jax_benchmarks.xla.settings import XlaSettings
from jax_benchmarks.xla.workload import LinalgOps, workload_suite


class JaxOps(LinalgOps[jax.Array, jax.Array]):
    name = "jax"
    compiles = True

    def __init__(self, settings: XlaSettings) -> None:
        super().__init__(settings)
        # Wrapping in jax.jit traces and compiles nothing: that happens on the first (timed) call.
        n, dtype = self.n, jnp.dtype(settings.dtype)

        def uniform_pair(key_a: jax.Array, key_b: jax.Array) -> tuple[jax.Array, jax.Array]:
            return (jax.random.uniform(key_a, (n, n), dtype=dtype),
                    jax.random.uniform(key_b, (n, n), dtype=dtype))

        def means(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
            return jnp.mean(a), jnp.mean(b)

        def sums(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
            return jnp.sum(a), jnp.sum(b)

        def matmul(a: jax.Array, b: jax.Array) -> jax.Array:
            # The precision of float32 products is the run's --precision (src/jax_benchmarks/hardware/gpu_policy.py).
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

    def program(self, step: str, *args: Any) -> Callable[[], object] | None:
        if step == "uniform_pair":
            return jax_program(self._uniform_pair, *self.keys)
        return jax_program(getattr(self, f"_{step}"), *args)

    @property
    def rng(self) -> str:
        # The keys come from jax.random.key (src/jax_benchmarks/frameworks/rng.py), whose implementation is this default
        # (an option jax's type stubs do not declare).
        impl: str = getattr(jax.config, "jax_default_prng_impl")
        return f"jax.random ({impl})"

    @property
    def sync(self) -> Sync:
        return jax_sync

    @functools.cached_property
    def keys(self) -> tuple[jax.Array, jax.Array]:
        """One key per matrix, from --seed: every call regenerates the same pair."""
        device = jax_device(self.device_kind)
        rng = RNG_Provider(self.seed)
        return jax.device_put(rng.get(), device), jax.device_put(rng.get(), device)

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


def suites(settings: XlaSettings) -> list[Suite]:
    # float64 needs x64 on before any array of the run exists, and while every case is traced, called
    # and judged. As the suite's context it is on for exactly that and off again however the suite ends,
    # so nothing else in this process (other groups, tests) computes in float64 by surprise; float32
    # runs with it off, JAX's default.
    return [workload_suite(JaxOps(settings), settings,
                           context=lambda: jax.enable_x64(settings.dtype == "float64"))]
