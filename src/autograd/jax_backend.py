"""`autograd jax`: typed_grad(f), vectorised with vmap, with and without jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from src.autograd.harness import Target, Variant, run_target
from src.autograd.settings import AutogradSettings
from src.core.devices import DeviceKind, devices_to_time, jax_device
from src.core.results import Run
from src.core.timing import jax_sync
from src.core.typed import typed_grad, typed_jit


def f(x: jax.Array) -> jax.Array:
    return 0.2 * x + jnp.sin(x) + jnp.cos(2 * x)


def target(kind: DeviceKind) -> Target[jax.Array]:
    device = jax_device(kind)
    grad_each = jax.vmap(typed_grad(f))  # f′ of a scalar, mapped over the points
    # A fresh jit per device, so each device's first call pays (and reports) its own compile.
    return Target[jax.Array](
        backend="jax",
        device=kind,
        value=typed_jit(f),
        variants=(Variant("vmap", grad_each), Variant("vmap+jit", typed_jit(grad_each), compiled=True)),
        to_native=lambda a: jax.device_put(a, device),
        to_numpy=np.asarray,
        sync=jax_sync,
    )


def run(settings: AutogradSettings, run: Run) -> None:
    # float64 needs x64; scoped, so the rest of the process keeps JAX's defaults.
    with jax.enable_x64(settings.dtype == "float64"):
        for kind in devices_to_time(settings.device):
            run_target(run, settings, target(kind))
