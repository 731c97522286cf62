"""`jit jax`: the seed experiment done right — JAX eager vs `jax.jit` on every device."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from src.core.devices import DeviceKind, devices_to_time, jax_device
from src.core.results import Run
from src.core.timing import jax_sync
from src.core.typed import typed_jit
from src.jit.settings import SweepSettings
from src.jit.sweep import F32, SweepTarget, Variant, check_x1, log_skipped_lengths, run_sweep, x1

BACKEND = "jax"


def f(x: jax.Array) -> jax.Array:
    y: jax.Array = 0.2 * x + jnp.sin(x) + jnp.cos(2 * x)
    return y


def to_numpy(x: jax.Array) -> NDArray[np.floating]:
    return np.asarray(x)


def compare_x1(run: Run) -> float:
    """The seed's first print: f, jax.jit(f) and typed_jit(f) on x1 agree."""
    probe = jnp.asarray(x1())
    run.log("f(x) = 0.2·x + sin(x) + cos(2x) in JAX, float32:")
    return check_x1(run, {
        "f(x1)": to_numpy(f(probe)),
        "jax.jit(f)(x1)": to_numpy(jax.jit(f)(probe)),
        "typed_jit(f)(x1)": to_numpy(typed_jit(f)(probe)),
    })


def target_on(kind: DeviceKind, x1_error: float) -> SweepTarget[jax.Array]:
    device = jax_device(kind)

    def to_device(x: F32) -> jax.Array:
        moved: jax.Array = jax.device_put(x, device)
        return moved

    # A fresh jax.jit per device, so its first call (the compilation) is timed apart.
    return SweepTarget(
        backend=BACKEND, device=kind, to_device=to_device, to_numpy=to_numpy, sync=jax_sync,
        variants=[Variant("eager", f), Variant("jit", typed_jit(f), compiled=True)],
        checks={"x1_max_abs_err": x1_error},
    )


def run(settings: SweepSettings, run: Run) -> None:
    x1_error = compare_x1(run)
    log_skipped_lengths(run, BACKEND, settings)
    for kind in devices_to_time(settings.device):
        run_sweep(run, settings, target_on(kind, x1_error))
