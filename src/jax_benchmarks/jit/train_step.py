"""The train step of `jit flax`: model and Adam as one state pytree, the step both modes run, accuracy.

The step is a pure function of the model-and-optimizer state (`nnx.split` / `nnx.merge`), so the
very same function is run eagerly, jitted, and shown as a jaxpr.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import optax  # type: ignore[import-untyped, unused-ignore]
from flax import nnx
from flax.typing import Key

from jax_benchmarks.frameworks.flax_params import parameter_count
from jax_benchmarks.jit.batching import Batch
from jax_benchmarks.jit.data import TrainingArrays
from jax_benchmarks.jit.flax_models import CNN, MLP
from jax_benchmarks.jit.settings import JitTrainingSettings

EVAL_BATCH = 1000

ModelAndOptimizer = tuple[nnx.Module, nnx.Optimizer[nnx.Module]]
TrainGraph = nnx.GraphDef[ModelAndOptimizer]
TrainState = nnx.State[Key, object]
TrainStep = Callable[[TrainState, jax.Array, jax.Array], tuple[TrainState, jax.Array]]


def build_state(settings: JitTrainingSettings, data: TrainingArrays) -> tuple[TrainGraph, TrainState, str]:
    """Model and Adam optimizer, split into a static graph and a state pytree; and their description."""
    rngs = nnx.Rngs(settings.seed)
    model: nnx.Module
    if settings.model == "mlp":
        model = MLP(data.x_train.shape[1], data.classes, rngs=rngs)
        shape = f"MLP {data.x_train.shape[1]} → 10 (relu) → {data.classes} (log-softmax)"
    else:
        model = CNN(data.classes, rngs=rngs)
        shape = "CNN conv 32 → avg-pool → conv 64 → avg-pool → dense 256 → dense 10 (log-softmax)"
    optimizer: nnx.Optimizer[nnx.Module] = nnx.Optimizer(model, optax.adam(settings.learning_rate), wrt=nnx.Param)
    pair: ModelAndOptimizer = (model, optimizer)
    graphdef, state = nnx.split(pair)
    return graphdef, state, f"{shape}, {parameter_count(model):,} parameters; Adam {settings.learning_rate:g}"


def nll_loss(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean negative log-likelihood of the labels under the model's log-softmax."""
    log_probs: jax.Array = model(x)
    return -jnp.mean(jnp.take_along_axis(log_probs, y[:, None], axis=1))


def make_train_step(graphdef: TrainGraph) -> TrainStep:
    """The one train step both modes run: state in, new state and the batch loss out."""

    def train_step(state: TrainState, x: jax.Array, y: jax.Array) -> tuple[TrainState, jax.Array]:
        # copy=True keeps the step pure when it runs eagerly: without it the optimizer
        # would update the caller's state in place (under jit the inputs are tracers anyway).
        model, optimizer = nnx.merge(graphdef, state, copy=True)
        loss, grads = nnx.value_and_grad(nll_loss)(model, x, y)
        optimizer.update(model, grads)
        return nnx.state((model, optimizer)), loss

    return train_step


def accuracy(graphdef: TrainGraph, state: TrainState, data: TrainingArrays, device: jax.Device) -> float:
    """Share of test examples classified correctly (jitted, outside every timed region)."""

    @jax.jit
    def correct(state: TrainState, x: jax.Array, y: jax.Array) -> jax.Array:
        model, _ = nnx.merge(graphdef, state)
        return jnp.sum(jnp.argmax(model(x), axis=-1) == y)

    total = 0
    for start in range(0, len(data.y_test), EVAL_BATCH):
        x = jax.device_put(data.x_test[start : start + EVAL_BATCH], device)
        y = jax.device_put(data.y_test[start : start + EVAL_BATCH], device)
        total += int(correct(state, x, y))
    return total / max(len(data.y_test), 1)


def step_jaxpr(step: TrainStep, state: TrainState, batch: Batch) -> tuple[int, str]:
    """The train step's jaxpr for one batch: its number of equations and its text."""
    jaxpr = jax.make_jaxpr(step)(state, *batch)
    return len(jaxpr.jaxpr.eqns), str(jaxpr)
