"""`jit jax`: JAX eager vs `jax.jit` on every device."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.measure.memory import jax_program
from jax_benchmarks.example_function.in_jax import f
from jax_benchmarks.frameworks.descriptors import JaxArrays
from jax_benchmarks.frameworks.typed import typed_jit
from jax_benchmarks.hardware.devices import devices_to_time
from jax_benchmarks.jit.settings import SweepSettings
from jax_benchmarks.jit.sweep import SweepVariant, X1Check, log_skipped_lengths, sweep_suite, x1
from jax_benchmarks.measure.harness import Recorder, Suite

BACKEND = "jax"


def x1_rows() -> dict[str, NDArray[np.floating]]:
    """f, jax.jit(f) and typed_jit(f) on x1: the typed wrapper must compute what jax.jit does."""
    probe = jnp.asarray(x1())
    return {
        "f(x1)": np.asarray(f(probe)),
        "jax.jit(f)(x1)": np.asarray(jax.jit(f)(probe)),
        "typed_jit(f)(x1)": np.asarray(typed_jit(f)(probe)),
    }


def suites(settings: SweepSettings) -> list[Suite]:
    x1_check = X1Check(x1_rows)

    def before(run: Recorder) -> None:
        run.log("f(x) = 0.2·x + sin(x) + cos(2x) in JAX, float32:")
        x1_check.check(run)
        log_skipped_lengths(run, BACKEND, settings)

    return [
        sweep_suite(
            BACKEND, JaxArrays(kind), settings,
            # A fresh jax.jit per device, so its first call (the compilation) is timed apart.
            [SweepVariant("eager", lambda: f),
             SweepVariant("jit", lambda: typed_jit(f), compiled=True, program=jax_program)],
            x1_check, before=before if i == 0 else None,
        )
        for i, kind in enumerate(devices_to_time(settings.device))
    ]
