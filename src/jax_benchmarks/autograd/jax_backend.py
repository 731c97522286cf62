"""`autograd jax`: typed_grad(f), vectorised with vmap, with and without jit."""

from __future__ import annotations

import jax

from jax_benchmarks.autograd.cases import gradient_suite
from jax_benchmarks.autograd.settings import AutogradSettings
from jax_benchmarks.example_function.in_jax import f
from jax_benchmarks.frameworks.arrays import JaxArrays
from jax_benchmarks.frameworks.typed import typed_grad, typed_jit
from jax_benchmarks.hardware.devices import DeviceKind, devices_to_time
from jax_benchmarks.measure.harness import Suite


def suite(settings: AutogradSettings, kind: DeviceKind) -> Suite:
    grad_each = jax.vmap(typed_grad(f))  # f′ of a scalar, mapped over the points
    # A fresh jit per device, so each device's first call pays (and reports) its own compile.
    return gradient_suite(
        "jax", JaxArrays(kind), settings, value=typed_jit(f),
        gradients=[("vmap", grad_each), ("vmap+jit", typed_jit(grad_each))], compiled=["vmap+jit"],
        # float64 needs x64 on before any array of the suite exists; scoped to the suite, so the rest
        # of the process keeps JAX's defaults.
        context=lambda: jax.enable_x64(settings.dtype == "float64"),
    )


def suites(settings: AutogradSettings) -> list[Suite]:
    return [suite(settings, kind) for kind in devices_to_time(settings.device)]
