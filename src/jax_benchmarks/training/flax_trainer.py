"""The Flax side of the CNN: the model in flax.nnx and its trainer (one jitted train step, data resident on
the device), used by `mnist flax`, by `jit flax` (jitted and not) and, per process, by multi-process jobs
(`jax_benchmarks.mnist.flax_processes`).

With `--devices N|all` the same step runs data-parallel: a `Mesh` over N devices, each batch sharded on
its "data" axis, parameters and optimizer state replicated; XLA inserts the gradient all-reduce. On CPU
the CLI splits the host into one XLA device per core, and keeps jaxlib's YNNPACK kernels for dot products
only, so the convolutions run on XLA's own kernels (`src/jax_benchmarks/hardware/xla_flags.py` says why):
both through XLA_FLAGS, set before JAX is imported.

The step is jitted through the Flax NNX functional API (`nnx.split` once,
`nnx.merge` inside the jitted function), the pattern the Flax performance guide
recommends for small models: `nnx.jit` would walk the object graph in Python on
every call. Training metrics are accumulated on the device and read once per
epoch, so the loop never waits for the device between steps.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import jax
import jax.numpy as jnp
import numpy as np
import optax  # type: ignore[import-untyped]
from flax import nnx

from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jax_benchmarks.errors import SettingsError
from jax_benchmarks.frameworks.flax_params import parameter_count
from jax_benchmarks.frameworks.descriptors import jax_device, jax_sync
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.measure.timing import Sync
from jax_benchmarks.frameworks.typed import jit_cache_size, typed_jit
from jax_benchmarks.training import model_spec as spec
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.training.settings import TrainingSettings
from jax_benchmarks.training.trainer import EpochResult, EvalResult, mixed_precision_text, parameter_table

BACKEND = "flax"
T = TypeVar("T")


class CNN(nnx.Module):
    """The CNN of `model_spec`, with unpadded ('VALID') convolutions like PyTorch's nn.Conv2d default
    (Flax's default 'SAME' padding would make a different, larger model)."""

    def __init__(self, *, rngs: nnx.Rngs, param_dtype: Any = jnp.float32, dtype: Any = None) -> None:
        # param_dtype: float32 for mnist; autograd's CNN case also trains it in float64 (under jax.enable_x64).
        # dtype: the compute dtype (bfloat16 for mixed precision, as Flax's users write it); None: the inputs'.
        kernel = (spec.KERNEL, spec.KERNEL)
        self.conv1 = nnx.Conv(1, spec.CONV1, kernel, padding="VALID", param_dtype=param_dtype, dtype=dtype, rngs=rngs)
        self.conv2 = nnx.Conv(spec.CONV1, spec.CONV2, kernel, padding="VALID", param_dtype=param_dtype, dtype=dtype,
                              rngs=rngs)
        self.dropout1 = nnx.Dropout(spec.DROPOUT_CONV, rngs=rngs)
        self.dense1 = nnx.Linear(spec.FLAT, spec.HIDDEN, param_dtype=param_dtype, dtype=dtype, rngs=rngs)
        self.dropout2 = nnx.Dropout(spec.DROPOUT_DENSE, rngs=rngs)
        self.dense2 = nnx.Linear(spec.HIDDEN, spec.CLASSES, param_dtype=param_dtype, dtype=dtype, rngs=rngs)
        self.param_dtype = param_dtype

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.relu(self.conv1(x))
        x = nnx.relu(self.conv2(x))
        x = max_pool_2x2(x)
        x = self.dropout1(x)
        x = x.reshape(x.shape[0], -1)
        x = nnx.relu(self.dense1(x))
        x = self.dropout2(x)
        # The log-softmax and the loss in the parameters' dtype (float32 under bf16 mixed precision, as autocast
        # runs PyTorch's).
        return nnx.log_softmax(self.dense2(x).astype(self.param_dtype))


def max_pool_2x2(x: jax.Array) -> jax.Array:
    """2×2 max-pool with stride 2 over NHWC, written as a reshape and a max over the window axes.

    The same values as `nnx.max_pool(x, (2, 2), strides=(2, 2))` and the same gradients wherever a window
    has one maximum (a tie splits the gradient instead of picking one; here ties are ReLU zeros, whose
    gradient is zero anyway). XLA:CPU differentiates max_pool's reduce_window through select-and-scatter,
    which `benchmarks/mnist_cpu.py` measures several times slower than this form's backward pass."""
    n, h, w, c = x.shape
    return x.reshape(n, h // 2, 2, w // 2, 2, c).max(axis=(2, 4))


def make_optimizer(settings: TrainingSettings, total_steps: int) -> optax.GradientTransformation:
    """Adam or SGD with the schedule defined over the whole run (epochs × steps)."""
    lr: optax.ScalarOrSchedule = settings.lr
    if settings.lr_schedule == "onecycle":
        # The defaults of torch.optim.lr_scheduler.OneCycleLR, so both backends follow one curve.
        lr = optax.cosine_onecycle_schedule(
            max(total_steps, 2), peak_value=settings.lr, pct_start=0.3, div_factor=25.0, final_div_factor=1e4
        )
    if settings.optimizer == "adam":
        return optax.adam(lr, b1=settings.momentum)
    return optax.sgd(lr, momentum=settings.momentum or None)


def make_mesh(kind: str, count: int) -> Mesh:
    """A one-axis ("data") mesh over the first `count` devices of the kind."""
    platform = "gpu" if kind == "gpu" else "cpu"
    devices = jax.devices(platform)
    if len(devices) < count:
        raise SettingsError("--devices",
            f"{count}: JAX sees {len(devices)} {platform} device(s). On CPU the host is split into "
            "devices by XLA_FLAGS=--xla_force_host_platform_device_count=N, which must be set before JAX is "
            "imported (`mnist flax --devices N` does it)"
        )
    return Mesh(np.array(devices[:count]), ("data",))


def spec_of(*axes: str) -> PartitionSpec:
    """PartitionSpec() replicates; PartitionSpec("data") splits the first dimension over the mesh."""
    return PartitionSpec(*axes)  # type: ignore[no-untyped-call]


def constrain(tree: T, sharding: Any) -> T:
    """Inside jit: lay `tree` out as `sharding` says (XLA adds the collectives)."""
    return cast(T, jax.lax.with_sharding_constraint(tree, sharding))  # type: ignore[no-untyped-call]


def nll(log_probs: jax.Array, labels: jax.Array) -> jax.Array:
    """Per-image negative log-likelihood (the model ends in log-softmax)."""
    return -jnp.take_along_axis(log_probs, labels[:, None], axis=1)[:, 0]


EpochOutput = dict[str, jax.Array]  # loss_sum, correct, losses: summed on the device, read once per epoch
EvalOutput = tuple[jax.Array, jax.Array, jax.Array, int]  # loss sum, correct, predictions, images


class FlaxTrainer:
    backend = BACKEND
    fixed_count = False

    def __init__(self, settings: TrainingSettings, data: MnistData, rng: RNG_Provider, *, mesh: Any = None,
                 jit: bool = True) -> None:
        self.settings = settings
        self.rng = rng
        self.plan = settings.plan(len(data.y_train), len(data.y_test))
        tx = make_optimizer(settings, settings.num_epochs * self.plan.steps)
        # bf16: bfloat16 compute from float32 parameters (`CNN`'s dtype), Flax's mixed precision. The parameters are
        # drawn on JAX's default device and placed below (`_replicate`), as before the device was looked up.
        self.model = CNN(rngs=nnx.Rngs(params=rng.get(), dropout=rng.get()),
                         dtype=jnp.bfloat16 if settings.mixed_bf16 else None)
        self.jax_device = jax_device(settings.device_kind)
        self.device: str = settings.device_kind
        self.sync: Sync = jax_sync
        # A given mesh (a multi-process job's, over every process's devices) wins over --devices.
        self.mesh = mesh if mesh is not None else (
            make_mesh(settings.device_kind, settings.device_count) if settings.device_count > 1 else None
        )
        self.devices = self.mesh.size if self.mesh is not None else 1
        # Where arrays live: one device, or replicated over the mesh (batches are sharded inside the step).
        self.placement: Any = NamedSharding(self.mesh, spec_of()) if self.mesh is not None else self.jax_device
        self.batch_sharding = NamedSharding(self.mesh, spec_of("data")) if self.mesh is not None else None
        self.precision = mixed_precision_text("compute dtype bfloat16") if settings.mixed_bf16 else settings.precision
        self.optimizer = nnx.Optimizer(self.model, tx, wrt=nnx.Param)
        self.graphdef, state = nnx.split((self.model, self.optimizer))
        self.state = self._replicate(state)
        self.n_train = len(data.y_train)
        self._place_training_data(data)
        self.x_test, self.y_test, self.n_test = self._padded_test(data, self.placement)
        # Not jitted (`jit flax`'s eager variant), the same step runs op by op, each operation dispatched alone.
        step = self._make_train_step(self.plan.batch)
        self._train_step = typed_jit(step) if jit else step
        self.mode = "jit" if jit else "eager"
        self._eval_step = typed_jit(self._make_eval_step())

    def _replicate(self, tree: T) -> T:
        """`tree` on the device, or replicated on every device of the mesh."""
        placed: T = jax.device_put(tree, self.placement)
        return placed

    def _place_training_data(self, data: MnistData) -> None:
        """The data crosses to the device(s) once; each step gathers its batch there."""
        self.x_train = jax.device_put(np.asarray(data.x_train, np.float32), self.placement)
        self.y_train = jax.device_put(np.asarray(data.y_train, np.int32), self.placement)

    def _padded_test(self, data: MnistData, placement: Any) -> tuple[jax.Array, jax.Array, int]:
        # Pad to whole batches so one compiled eval step covers every test image; a mask drops the padding.
        n, batch = len(data.y_test), self.settings.test_batch_size
        pad = -n % batch
        x = np.concatenate([data.x_test, np.zeros((pad, *data.x_test.shape[1:]), np.float32)])
        y = np.concatenate([data.y_test, np.zeros(pad, np.int32)]).astype(np.int32)
        return jax.device_put(x, placement), jax.device_put(y, placement), n

    # -------------------------------------------------------------- steps ---

    def _make_train_step(self, batch: int) -> Callable[..., tuple[Any, dict[str, jax.Array]]]:
        """The step on batch i of `order`, gathered from the device-resident data set."""
        shard = self._shard_batch
        update = self._make_update()

        def train_step(
            state: Any, acc: dict[str, jax.Array], x_all: jax.Array, y_all: jax.Array, order: jax.Array, i: jax.Array
        ) -> tuple[Any, dict[str, jax.Array]]:
            index = jax.lax.dynamic_slice_in_dim(order, i * batch, batch)
            return update(state, acc, shard(x_all[index]), shard(y_all[index]), i)

        return train_step

    def _make_update(self) -> Callable[..., tuple[Any, dict[str, jax.Array]]]:
        """One optimizer step on the batch (x, y), accumulating step i's loss and hits."""
        graphdef = self.graphdef
        replicated = self.placement if self.mesh is not None else None

        def update(
            state: Any, acc: dict[str, jax.Array], x: jax.Array, y: jax.Array, i: jax.Array
        ) -> tuple[Any, dict[str, jax.Array]]:
            # copy=True: run eagerly, the optimizer would otherwise update the caller's state in place (the step
            # case's discarded steps would advance training); under jit the inputs are tracers anyway.
            model, optimizer = nnx.merge(graphdef, state, copy=True)

            def loss_fn(model: CNN) -> tuple[jax.Array, jax.Array]:
                log_probs = model(x)
                return jnp.mean(nll(log_probs, y)), log_probs

            (loss, log_probs), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
            optimizer.update(model, grads)
            correct = jnp.sum(jnp.argmax(log_probs, axis=-1) == y)
            acc = {
                "loss_sum": acc["loss_sum"] + loss,
                "correct": acc["correct"] + correct,
                "losses": acc["losses"].at[i].set(loss),
            }
            new_state = nnx.state((model, optimizer))
            if replicated is not None:  # every device keeps the full, identical parameters
                new_state = constrain(new_state, replicated)
            return new_state, acc

        return update

    def _shard_batch(self, batch: jax.Array) -> jax.Array:
        """Split a batch over the mesh's "data" axis (a no-op on one device)."""
        if self.batch_sharding is None or batch.shape[0] % self.devices:
            return batch
        return constrain(batch, self.batch_sharding)

    def _make_eval_step(self) -> Callable[..., tuple[jax.Array, jax.Array, jax.Array]]:
        graphdef = self.graphdef
        shard = self._shard_batch

        def eval_step(state: Any, x: jax.Array, y: jax.Array, valid: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
            model, _ = nnx.merge(graphdef, state)
            model.eval()  # type: ignore[no-untyped-call]  # dropout off
            log_probs = model(shard(x))
            predicted = jnp.argmax(log_probs, axis=-1)
            return jnp.sum(nll(log_probs, y) * valid), jnp.sum((predicted == y) * valid), predicted

        return eval_step

    def _zero_acc(self, steps: int) -> dict[str, jax.Array]:
        acc = {"loss_sum": jnp.zeros(()), "correct": jnp.zeros((), jnp.int32), "losses": jnp.zeros(steps)}
        return self._replicate(acc)

    # ------------------------------------------------------------ Trainer ---

    def summary(self) -> str:
        rows = [
            (".".join(str(name) for name in path), "×".join(map(str, param.shape)), int(np.prod(param.shape)))
            for path, param in nnx.to_flat_state(nnx.state(self.model, nnx.Param))
        ]
        return parameter_table(f"flax.nnx CNN ({type(self.optimizer).__name__} {self.settings.optimizer})", rows)

    def parameter_count(self) -> int:
        return parameter_count(self.model)

    def prepare_step(self) -> Callable[[], object]:
        """The compiled step on one batch; its results are discarded, so training is not advanced."""
        # Same shapes as in train_epoch, so the epochs reuse this compilation.
        order = jax.device_put(jnp.arange(self.x_train.shape[0]), self.placement)
        acc = self._zero_acc(self.plan.steps)
        i = jnp.int32(0)
        self._compile_for_epochs()
        return lambda: self._train_step(self.state, acc, self.x_train, self.y_train, order, i)

    def step_jaxpr(self) -> tuple[int, str]:
        """The train step's jaxpr for one batch: its number of equations and its text (traces, runs nothing)."""
        order = jnp.arange(self.x_train.shape[0])
        jaxpr = jax.make_jaxpr(self._make_train_step(self.plan.batch))(
            self.state, self._zero_acc(self.plan.steps), self.x_train, self.y_train, order, jnp.int32(0))
        return len(jaxpr.jaxpr.eqns), str(jaxpr)

    def _compile_for_epochs(self) -> None:
        """Compile what the epochs and validation use besides the step, so no epoch is timed with a compilation
        in it. The permutation draws a key, as every epoch does: a run draws the same keys with or without
        the step case."""
        jax_sync(jax.random.permutation(self.rng.get(), self.n_train))
        jax_sync(self.evaluate(min(self.n_test, self.settings.test_batch_size)))

    def end_step(self) -> None:
        """Nothing to put back: the timed steps' new state was discarded."""

    def compilations(self) -> int | None:
        """How many times jax.jit compiled the train step (None when it runs eagerly)."""
        return jit_cache_size(self._train_step) if hasattr(self._train_step, "_cache_size") else None

    def compile_counts(self) -> dict[str, int]:
        compilations = self.compilations()
        return {} if compilations is None else {"compilations": compilations}

    def warm_up(self) -> None:
        jax_sync(self.prepare_step()())

    def train_epoch(self, steps: int, on_step: Callable[[], None]) -> EpochOutput:
        order = jax.device_put(jax.random.permutation(self.rng.get(), self.x_train.shape[0]), self.placement)
        acc = self._zero_acc(steps)
        for i in range(steps):
            self.state, acc = self._train_step(self.state, acc, self.x_train, self.y_train, order, jnp.int32(i))
            on_step()
        return acc

    def read_epoch(self, output: EpochOutput) -> EpochResult:
        host = jax.device_get(output)
        steps = len(host["losses"])
        return EpochResult(
            loss=float(host["loss_sum"]) / steps,
            accuracy=float(host["correct"]) / (steps * self.plan.batch),
            images=steps * self.plan.batch,
            step_losses=tuple(float(v) for v in host["losses"]),
        )

    def evaluate(self, limit: int) -> EvalOutput:
        batch = self.settings.test_batch_size
        loss = jnp.zeros(())
        correct = jnp.zeros((), jnp.int32)
        predictions = []
        for start in range(0, limit, batch):
            valid = (jnp.arange(start, start + batch) < limit).astype(jnp.float32)
            x, y = self.x_test[start:start + batch], self.y_test[start:start + batch]
            batch_loss, batch_correct, predicted = self._eval_step(self._eval_state(), x, y, valid)
            loss, correct = loss + batch_loss, correct + batch_correct.astype(jnp.int32)
            predictions.append(predicted)
        return loss, correct, jnp.concatenate(predictions)[:limit], limit

    def _eval_state(self) -> Any:
        """The parameters validation runs with."""
        return self.state

    def read_eval(self, output: EvalOutput) -> EvalResult:
        loss, correct, predictions, limit = output
        return EvalResult(float(loss) / limit, float(correct) / limit, limit, np.asarray(predictions))

    def save(self, path: Path) -> Path:
        import orbax.checkpoint as ocp  # type: ignore[import-untyped]

        self._sync_model()
        checkpointer = ocp.StandardCheckpointer()
        checkpointer.save(path, nnx.state(self.model, nnx.Param), force=True)
        checkpointer.wait_until_finished()
        return path

    def load(self, path: Path) -> None:
        import orbax.checkpoint as ocp

        abstract = jax.tree.map(ocp.utils.to_shape_dtype_struct, nnx.state(self.model, nnx.Param))
        restored = ocp.StandardCheckpointer().restore(path, abstract)
        nnx.update(self.model, restored)
        _, state = nnx.split((self.model, self.optimizer))
        self.state = jax.device_put(state, self.placement)

    def _sync_model(self) -> None:
        """Write the jitted state back into the nnx objects (they are stale while training)."""
        nnx.update((self.model, self.optimizer), self.state)
