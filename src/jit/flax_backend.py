"""`jit flax`: one training epoch with the train step jitted and not jitted.

From the "JAX speed test" article: the same flax.nnx train step (forward,
loss, gradient, Adam update) is run over the same batches twice, once as the
plain Python function ("eager": the unjitted step called directly, so every
JAX operation is dispatched on its own) and once through `jax.jit`. The step
is a pure function of the model-and-optimizer state (`nnx.split` /
`nnx.merge`), so the very same function is jitted, run eagerly and shown as
a jaxpr, and `jax.jit`'s compilation cache can be read before, during and
after the epoch: the last, smaller batch of an epoch has a new shape and
compiles the step a second time, unless `--drop-last` drops it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax  # type: ignore[import-untyped, unused-ignore]
from flax import nnx
from rich.markup import escape

from src.core.devices import jax_device
from src.core.errors import CheckFailed, DataError
from src.core.results import Record, Run, Scalar
from src.core.tables import format_seconds
from src.core.timing import Measurement, jax_sync, single, time_call
from src.core.typed import typed_jit
from src.jit.data import Dataset, load_mnist, toy_dataset
from src.jit.flax_models import CNN, MLP, parameter_count
from src.jit.settings import FlaxSettings

BACKEND = "flax"
DTYPE = "float32"
EAGER_HOW = "the unjitted train step called directly (op-by-op dispatch)"
# Both modes run the same float32 steps from the same start; XLA's fusion only
# reorders rounding. Training amplifies that drift over epochs (0.5 % after two
# CNN epochs here), so the check compares the first epoch's mean loss.
LOSS_RTOL = 1e-2
EVAL_BATCH = 1000

State = nnx.State[Any, Any]
Graph = nnx.GraphDef[Any]
Batch = tuple[jax.Array, jax.Array]
TrainStep = Callable[[State, jax.Array, jax.Array], tuple[State, jax.Array]]


def load_images(settings: FlaxSettings, log: Callable[[str], None]) -> Dataset:
    """The CNN's data; tests replace this function to train on tiny synthetic images."""
    return load_mnist(settings.data_source, settings.data_dir, settings.train_images, log)


def load_dataset(settings: FlaxSettings, log: Callable[[str], None]) -> Dataset:
    if settings.model == "mlp":
        return toy_dataset(settings.points, settings.seed)
    return load_images(settings, log)


# ----------------------------------------------------------------- batches ---

@dataclass(frozen=True)
class Batching:
    """How an epoch of `examples` splits into steps of `batch_size`."""

    examples: int
    batch_size: int
    drop_last: bool

    @property
    def full_batches(self) -> int:
        return self.examples // self.batch_size

    @property
    def last_batch(self) -> int:
        """Size of the last, smaller batch (0 when the batches divide evenly or it is dropped)."""
        return 0 if self.drop_last else self.examples % self.batch_size

    @property
    def steps(self) -> int:
        return self.full_batches + (1 if self.last_batch else 0)

    @property
    def used(self) -> int:
        return self.full_batches * self.batch_size + self.last_batch

    @property
    def expected_compilations(self) -> int:
        """One compilation per distinct batch shape the jitted step sees."""
        return (1 if self.full_batches else 0) + (1 if self.last_batch else 0)

    def describe(self) -> str:
        text = f"{self.steps} steps per epoch of {self.batch_size}"
        if self.last_batch:
            return text + f", the last of {self.last_batch}"
        dropped = self.examples % self.batch_size
        return text + (f" (--drop-last drops {dropped} examples)" if dropped else " (no smaller last batch)")


def epoch_batches(data: Dataset, batching: Batching, seed: int, epoch: int, device: jax.Device) -> list[Batch]:
    """This epoch's shuffled batches, already on the device (the same in both modes)."""
    order = np.random.default_rng([seed, epoch]).permutation(batching.examples)[: batching.used]
    batches = []
    for start in range(0, batching.used, batching.batch_size):
        index = order[start : start + batching.batch_size]
        batches.append((jax.device_put(data.x_train[index], device), jax.device_put(data.y_train[index], device)))
    return batches


# ------------------------------------------------------------------ model ---

def build_state(settings: FlaxSettings, data: Dataset) -> tuple[Graph, State, str]:
    """Model and Adam optimizer, split into a static graph and a state pytree."""
    rngs = nnx.Rngs(settings.seed)
    model: nnx.Module
    if settings.model == "mlp":
        model = MLP(data.x_train.shape[1], data.classes, rngs=rngs)
        shape = f"MLP {data.x_train.shape[1]} → 10 (relu) → {data.classes} (log-softmax)"
    else:
        model = CNN(data.classes, rngs=rngs)
        shape = "CNN conv 32 → avg-pool → conv 64 → avg-pool → dense 256 → dense 10 (log-softmax)"
    optimizer = nnx.Optimizer(model, optax.adam(settings.learning_rate), wrt=nnx.Param)
    graphdef, state = nnx.split((model, optimizer))
    return graphdef, state, f"{shape}, {parameter_count(model):,} parameters; Adam {settings.learning_rate:g}"


def nll_loss(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean negative log-likelihood of the labels under the model's log-softmax."""
    log_probs: jax.Array = model(x)
    return -jnp.mean(jnp.take_along_axis(log_probs, y[:, None], axis=1))


def make_train_step(graphdef: Graph) -> TrainStep:
    """The one train step both modes run: state in, new state and the batch loss out."""

    def train_step(state: State, x: jax.Array, y: jax.Array) -> tuple[State, jax.Array]:
        # copy=True keeps the step pure when it runs eagerly: without it the optimizer
        # would update the caller's state in place (under jit the inputs are tracers anyway).
        model, optimizer = nnx.merge(graphdef, state, copy=True)
        loss, grads = nnx.value_and_grad(nll_loss)(model, x, y)
        optimizer.update(model, grads)
        return nnx.state((model, optimizer)), loss

    return train_step


def accuracy(graphdef: Graph, state: State, data: Dataset,
             device: jax.Device) -> float:
    """Share of test examples classified correctly (jitted, outside every timed region)."""

    @jax.jit
    def correct(state: State, x: jax.Array, y: jax.Array) -> jax.Array:
        model, _ = nnx.merge(graphdef, state)
        return jnp.sum(jnp.argmax(model(x), axis=-1) == y)

    total = 0
    for start in range(0, len(data.y_test), EVAL_BATCH):
        x = jax.device_put(data.x_test[start : start + EVAL_BATCH], device)
        y = jax.device_put(data.y_test[start : start + EVAL_BATCH], device)
        total += int(correct(state, x, y))
    return total / max(len(data.y_test), 1)


# --------------------------------------------------------------- training ---

def jit_cache_size(jitted: object) -> int:
    """Entries in `jax.jit`'s compilation cache: one per distinct input signature compiled.

    `_cache_size()` is the method JAX's own tests use; it is not in jax's type stubs.
    """
    size: int = getattr(jitted, "_cache_size")()
    return size


@dataclass
class CacheTrace:
    """jax.jit's cache size before training, after each step of epoch 1, after each epoch."""

    before: int
    after_step: list[int] = field(default_factory=list)
    after_epoch: list[int] = field(default_factory=list)

    @property
    def compilations(self) -> int:
        return self.after_epoch[-1] if self.after_epoch else self.before

    def record_step(self, jitted: object) -> None:
        self.after_step.append(jit_cache_size(jitted))

    def steps_that_compiled(self) -> list[int]:
        """1-based steps of epoch 1 after which the cache grew."""
        sizes = [self.before, *self.after_step]
        return [i for i in range(1, len(sizes)) if sizes[i] > sizes[i - 1]]


@dataclass
class ModeResult:
    variant: str
    epoch_s: list[float]
    losses: list[float]
    state: State
    cache: CacheTrace | None = None
    test_accuracy: float = 0.0

    @property
    def measurement(self) -> Measurement:
        """Epoch 1 is the first call (compilation); later epochs are the steady samples."""
        if len(self.epoch_s) == 1:
            return single(self.epoch_s[0])
        return Measurement(tuple(self.epoch_s[1:]), first_call_s=self.epoch_s[0])


def train_epoch(step: TrainStep, state: State, batches: list[Batch],
                after_step: Callable[[], None] | None = None) -> tuple[State, list[jax.Array]]:
    losses = []
    for x, y in batches:
        state, loss = step(state, x, y)
        losses.append(loss)
        if after_step is not None:
            after_step()
    return state, losses


def train(variant: str, step: TrainStep, state: State, settings: FlaxSettings, data: Dataset,
          batching: Batching, device: jax.Device, log: Callable[[str], None]) -> ModeResult:
    """Run `settings.epochs` epochs, each timed as a whole (synced at its end, not per step)."""
    result = ModeResult(variant, [], [], state)
    if variant == "jit":
        result.cache = CacheTrace(before=jit_cache_size(step))
    for epoch in range(settings.epochs):
        batches = epoch_batches(data, batching, settings.seed, epoch, device)
        observe = None
        if result.cache is not None and epoch == 0:
            observe = functools.partial(result.cache.record_step, step)
        (state, losses), seconds = time_call(
            lambda: train_epoch(step, state, batches, observe), jax_sync  # noqa: B023 - called at once
        )
        result.epoch_s.append(seconds)
        result.losses.append(float(jnp.mean(jnp.stack(losses))))
        if result.cache is not None:
            result.cache.after_epoch.append(jit_cache_size(step))
        note = ""
        if epoch == 0:
            note = " (includes compilation)" if variant == "jit" else " (includes compiling each operation on first use)"
        log(f"  epoch {epoch + 1}: {format_seconds(seconds)} · mean loss {result.losses[-1]:.4f}{note}")
    result.state = state
    return result


def describe_cache(cache: CacheTrace, batching: Batching) -> str:
    steps = cache.after_step
    parts = [f"before {cache.before}"]
    shown = sorted({1, max(len(steps) - 1, 1), len(steps)})
    for step in shown:
        if 1 <= step <= len(steps):
            size = batching.last_batch if step == batching.steps and batching.last_batch else batching.batch_size
            parts.append(f"after step {step} (batch of {size}): {steps[step - 1]}")
    parts.append(f"after epoch {len(cache.after_epoch)}: {cache.compilations}")
    return "jit cache size: " + " · ".join(parts)


def explain_cache(cache: CacheTrace, batching: Batching) -> str:
    grew = cache.steps_that_compiled()
    where = ", ".join(str(s) for s in grew) or "none"
    text = f"  → {cache.compilations} compilation(s), at step(s) {where} of epoch 1"
    if batching.last_batch and batching.full_batches:
        return text + "; the last, smaller batch compiled the step a second time (--drop-last avoids it)"
    return text + "; later epochs reuse the cache"


# -------------------------------------------------------------- reporting ---

def case_name(settings: FlaxSettings, data: Dataset, batching: Batching) -> str:
    shape = "x".join(str(d) for d in (batching.used, *data.x_train.shape[1:]))
    return f"{settings.model}_epoch_{shape}_{DTYPE}"


def record_mode(run: Run, settings: FlaxSettings, data: Dataset, batching: Batching, result: ModeResult,
                eager: ModeResult | None) -> Record:
    m = result.measurement
    metrics: dict[str, Scalar] = {
        "items_per_s": batching.used / m.median_s,
        "final_loss": result.losses[-1],
        "test_accuracy": result.test_accuracy,
    }
    checks: dict[str, Scalar] = {}
    if eager is not None:
        metrics["speedup"] = eager.measurement.median_s / m.median_s
        checks["epoch_1_loss"] = result.losses[0]
        checks["epoch_1_loss_eager"] = eager.losses[0]
        checks["epoch_1_loss_rel_diff_vs_eager"] = relative_difference(result.losses[0], eager.losses[0])
        checks["final_loss_eager"] = eager.losses[-1]
    if result.cache is not None:
        metrics.update(
            cache_before=result.cache.before,
            cache_after_step_1=result.cache.after_step[0] if result.cache.after_step else None,
            cache_after_epoch_1=result.cache.after_epoch[0],
            compilations=result.cache.compilations,
        )
        checks["expected_compilations"] = batching.expected_compilations
    return run.record(
        backend=BACKEND, variant=result.variant, case=case_name(settings, data, batching),
        device=settings.device_kind, measurement=m, dtype=DTYPE,
        params={
            "model": settings.model, "data": data.description, "epochs": settings.epochs,
            "batch_size": settings.batch_size, "learning_rate": settings.learning_rate,
            "drop_last": settings.drop_last, "train_examples": batching.used, "steps_per_epoch": batching.steps,
            "last_batch": batching.last_batch, "timed": "one epoch = every train step, synced at the end",
            **({"not_jitted": EAGER_HOW} if result.variant == "eager" else {}),
        },
        compile_s=m.compile_s if result.variant == "jit" else None,
        metrics=metrics, checks=checks,
    )


def relative_difference(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


def check_results(jitted: ModeResult, eager: ModeResult, batching: Batching) -> list[str]:
    """What went wrong, if anything (checked after every figure is recorded)."""
    problems = []
    diff = relative_difference(jitted.losses[0], eager.losses[0])
    if not diff <= LOSS_RTOL:
        problems.append(
            f"epoch 1 mean loss jit {jitted.losses[0]:.6g} vs eager {eager.losses[0]:.6g}: "
            f"relative difference {diff:.3g} > {LOSS_RTOL:g}"
        )
    if jitted.cache is not None and jitted.cache.compilations != batching.expected_compilations:
        problems.append(
            f"jax.jit compiled the step {jitted.cache.compilations} time(s), expected "
            f"{batching.expected_compilations} for {batching.describe()}"
        )
    return problems


def show_jaxpr(run: Run, step: TrainStep, state: State, batch: Batch) -> None:
    jaxpr = jax.make_jaxpr(step)(state, *batch)
    run.log(f"jaxpr of the train step for one batch of {batch[0].shape[0]} ({len(jaxpr.jaxpr.eqns)} equations):")
    run.log(escape(str(jaxpr)))


def plot_epochs(run: Run, records: list[Record], settings: FlaxSettings) -> None:
    from src.core.plots import save_figure
    from src.jit.plot import epoch_time_chart

    path = save_figure(epoch_time_chart(records), f"jit_flax_{settings.model}_epoch_times")
    run.log(f"plot: {path}")


# --------------------------------------------------------------------- run ---

def run(settings: FlaxSettings, run: Run) -> None:
    device = jax_device(settings.device_kind)
    data = load_dataset(settings, run.log)
    batching = Batching(len(data.y_train), settings.batch_size, settings.drop_last)
    if batching.steps == 0:
        raise DataError(f"--batch-size {settings.batch_size}: no full batch in {batching.examples} training examples")
    graphdef, state, description = build_state(settings, data)
    state = jax.device_put(state, device)
    run.log(f"data: {data.description}: {len(data.y_train):,} train / {len(data.y_test):,} test examples")
    run.log(f"model: {description}, batch {settings.batch_size}: {batching.describe()}")
    step = make_train_step(graphdef)
    if settings.show_jaxpr:
        show_jaxpr(run, step, state, epoch_batches(data, batching, settings.seed, 0, device)[0])

    run.log(f"not jitted — {EAGER_HOW}:")
    eager = train("eager", step, state, settings, data, batching, device, run.log)
    run.log("jitted — jax.jit of the same step:")
    jitted = train("jit", typed_jit(step), state, settings, data, batching, device, run.log)
    assert jitted.cache is not None
    run.log(describe_cache(jitted.cache, batching))
    run.log(explain_cache(jitted.cache, batching))

    for result in (eager, jitted):
        result.test_accuracy = accuracy(graphdef, result.state, data, device)
    records = [record_mode(run, settings, data, batching, eager, None),
               record_mode(run, settings, data, batching, jitted, eager)]
    e, j = eager.measurement, jitted.measurement
    compile_text = f", compilation {format_seconds(j.compile_s)} paid once" if j.compile_s is not None else ""
    run.log(
        f"one epoch: not jitted {format_seconds(e.median_s)}, jitted {format_seconds(j.median_s)} → "
        f"×{e.median_s / j.median_s:.1f} with jit{compile_text}; test accuracy "
        f"{eager.test_accuracy:.1%} / {jitted.test_accuracy:.1%}"
    )
    if settings.plot:
        plot_epochs(run, records, settings)
    problems = check_results(jitted, eager, batching)
    if problems:
        raise CheckFailed("; ".join(problems))
