"""`jit jax`: JAX eager vs `jax.jit` on every device."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.hardware.devices import DeviceKind, devices_to_time, jax_device
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.store.results import Run
from jax_benchmarks.measure.timing import jax_sync
from jax_benchmarks.frameworks.typed import typed_jit
from jax_benchmarks.measure.memory import jax_program
from jax_benchmarks.example_function.in_jax import f
from jax_benchmarks.jit.settings import SweepSettings
from jax_benchmarks.jit.sweep import F32, OnDevice, SweepVariant, X1Agreement, log_skipped_lengths, sweep_suite, x1

BACKEND = "jax"


def to_numpy(x: jax.Array) -> NDArray[np.floating]:
    return np.asarray(x)


def x1_rows() -> dict[str, NDArray[np.floating]]:
    """f, jax.jit(f) and typed_jit(f) on x1: the typed wrapper must compute what jax.jit does."""
    probe = jnp.asarray(x1())
    return {
        "f(x1)": to_numpy(f(probe)),
        "jax.jit(f)(x1)": to_numpy(jax.jit(f)(probe)),
        "typed_jit(f)(x1)": to_numpy(typed_jit(f)(probe)),
    }


def on(kind: DeviceKind) -> OnDevice[jax.Array]:
    device = jax_device(kind)

    def to_device(x: F32) -> jax.Array:
        moved: jax.Array = jax.device_put(x, device)
        return moved

    return OnDevice(to_device=to_device, to_numpy=to_numpy, sync=jax_sync)


def suites(settings: SweepSettings) -> list[Suite]:
    agreement = X1Agreement(x1_rows)

    def before(run: Run) -> None:
        run.log("f(x) = 0.2·x + sin(x) + cos(2x) in JAX, float32:")
        agreement.check(run)
        log_skipped_lengths(run, BACKEND, settings)

    return [
        sweep_suite(
            BACKEND, kind, settings, functools.partial(on, kind),
            # A fresh jax.jit per device, so its first call (the compilation) is timed apart.
            [SweepVariant("eager", lambda: f), SweepVariant("jit", lambda: typed_jit(f), compiled=True, program=jax_program)],
            agreement, before=before if i == 0 else None,
        )
        for i, kind in enumerate(devices_to_time(settings.device))
    ]
