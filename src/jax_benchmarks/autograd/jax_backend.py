"""`autograd jax`: typed_grad(f), vectorised with vmap, with and without jit; and the mnist CNN's train step in
Flax (mnist's own flax.nnx `CNN`, jitted), beside the same step in PyTorch eager and in the project's engine."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jax_benchmarks.autograd.cases import gradient_suite
from jax_benchmarks.autograd.cnn_cases import Batch, cnn_suite
from jax_benchmarks.autograd.settings import CnnSettings
from jax_benchmarks.example_function.in_jax import f
from jax_benchmarks.frameworks.descriptors import FLAX_LIBRARY, OPTAX_LIBRARY, JaxArrays, jax_device, jax_sync
from jax_benchmarks.frameworks.typed import typed_grad, typed_jit
from jax_benchmarks.hardware.devices import DeviceKind, devices_to_time
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.measure.memory import jax_program
from jax_benchmarks.hardware import xla_flags
from jax_benchmarks.store.record import Scalar


class FlaxCnnBench:
    """The mnist CNN's train step in Flax: the mnist group's flax.nnx `CNN` (read, not changed here), optax Adam
    1e-3 (the betas and eps of torch.optim.Adam's defaults), the batch's mean negative log-likelihood; one
    jitted step through nnx.split/merge, as mnist's trainer steps. Flax's convolutions take NHWC, so the NCHW
    batch is transposed once, before any timing."""

    def __init__(self, batch: Batch, kind: DeviceKind) -> None:
        # Flax and Optax load here: without them the gradient cases of `autograd jax` still run (the suite skips
        # this case, naming them).
        import optax  # type: ignore[import-untyped]
        from flax import nnx

        from jax_benchmarks.training.flax_trainer import CNN, nll

        device = jax_device(kind)
        dtype = jnp.dtype(str(batch.images.dtype))
        model = CNN(rngs=nnx.Rngs(params=0, dropout=1), param_dtype=dtype)
        optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
        graphdef, state = nnx.split((model, optimizer))
        self.state: Any = jax.device_put(state, device)
        self.images = jax.device_put(np.ascontiguousarray(np.transpose(batch.images, (0, 2, 3, 1))), device)
        self.labels = jax.device_put(batch.labels.astype(np.int32), device)

        def update(state: Any, x: jax.Array, y: jax.Array) -> tuple[Any, jax.Array]:
            model, optimizer = nnx.merge(graphdef, state)

            def loss_fn(model: CNN) -> jax.Array:
                return jnp.mean(nll(model(x), y))

            loss, grads = nnx.value_and_grad(loss_fn)(model)
            optimizer.update(model, grads)
            return nnx.state((model, optimizer)), loss

        def batch_loss(state: Any, x: jax.Array, y: jax.Array) -> jax.Array:
            model, _ = nnx.merge(graphdef, state)
            model.eval()  # type: ignore[no-untyped-call]  # dropout off
            return jnp.mean(nll(model(x), y))

        self._update = typed_jit(update)
        self._batch_loss = typed_jit(batch_loss)

    def step(self) -> tuple[Any, jax.Array]:
        """One jitted step; returns the new state and the loss, which the case's sync waits for."""
        self.state, loss = self._update(self.state, self.images, self.labels)
        return self.state, loss

    def batch_loss(self) -> float:
        return float(self._batch_loss(self.state, self.images, self.labels))

    def program(self) -> Callable[[], object]:
        """The jitted step's compiled program, for XLA's memory analysis."""
        return jax_program(self._update, self.state, self.images, self.labels)


def conv_kernels() -> dict[str, Scalar]:
    """Which kernels XLA:CPU runs the convolutions on in this process (XLA_FLAGS, read by JAX once at start):
    `autograd jax|all --xla-cpu-conv` chooses them before JAX loads, as `mnist flax` does (autograd/cli.py);
    read back here, what is in effect is recorded, so a figure is compared with mnist's only where the kernels
    agree."""
    return {"xla_cpu_conv": xla_flags.conv_in_effect(os.environ.get("XLA_FLAGS", ""))}


def suite(settings: CnnSettings, kind: DeviceKind) -> list[Suite]:
    grad_each = jax.vmap(typed_grad(f))  # f′ of a scalar, mapped over the points

    # float64 needs x64 on before any array of the suite exists; scoped to the suite, so the rest
    # of the process keeps JAX's defaults.
    def x64() -> Any:
        return jax.enable_x64(settings.dtype == "float64")

    # A fresh jit per device, so each device's first call pays (and reports) its own compile.
    return [
        gradient_suite(
            "jax", JaxArrays(kind), settings, value=typed_jit(f),
            gradients=[("vmap", grad_each), ("vmap+jit", typed_jit(grad_each))], compiled=["vmap+jit"], context=x64,
        ),
        cnn_suite("jax", kind, settings, lambda batch: FlaxCnnBench(batch, kind), sync=jax_sync, context=x64,
                  params=conv_kernels() if kind == "cpu" else {}, program=FlaxCnnBench.program, needs=(FLAX_LIBRARY, OPTAX_LIBRARY)),
    ]


def suites(settings: CnnSettings) -> list[Suite]:
    return [each for kind in devices_to_time(settings.device) for each in suite(settings, kind)]
