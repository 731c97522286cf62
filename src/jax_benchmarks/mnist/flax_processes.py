"""`mnist flax` as one process of a multi-process job (after `jax.distributed.initialize`).

The same jitted update as on one process, over a mesh of every process's
devices (`jax.devices()`): parameters and optimizer state replicated, the
global batch sharded on the "data" axis. Every process computes the same
shuffled order (same seed), takes its own rows of each global batch from its
host copy of the data and feeds them with
`jax.make_array_from_process_local_data`; XLA all-reduces the gradients
(over gloo between CPU processes). The global batch is therefore the one a
single process would train on, and the loss curve is the same.

Validation runs on each process's own replica of the parameters, on its
local device, with no collective: every process could report it, process 0's
record is the run's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, PartitionSpec

from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.frameworks.typed import typed_jit
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.training.flax_trainer import EpochOutput, FlaxTrainer
from jax_benchmarks.mnist.settings import MnistSettings

T = TypeVar("T")


def platform_of(kind: str) -> str:
    return "gpu" if kind == "gpu" else "cpu"


class ProcessFlaxTrainer(FlaxTrainer):
    # Every process must run as many steps (each ends in an all-reduce): a fixed count, never calibrated by time.
    fixed_count = True

    def __init__(self, settings: MnistSettings, data: MnistData, rng: RNG_Provider) -> None:
        platform = platform_of(settings.device_kind)
        # jax.devices() lists every process's devices, in process order: the mesh spans the job.
        super().__init__(settings, data, rng, mesh=Mesh(np.array(jax.devices(platform)), ("data",)))
        self.jax_device = jax.local_devices(backend=platform)[0]
        self._fed_step = typed_jit(self._make_update())
        self.rows = self._my_rows()

    def _replicate(self, tree: T) -> T:
        """This process's arrays (the same on every process: same seed) as one global replicated array each."""
        assert self.mesh is not None
        spec = PartitionSpec()  # type: ignore[no-untyped-call]
        placed: T = multihost_utils.host_local_array_to_global_array(tree, self.mesh, spec)
        return placed

    def _place_training_data(self, data: MnistData) -> None:
        """Each process keeps its copy of the data on the host and feeds only its own rows."""
        self.x_host = np.asarray(data.x_train, np.float32)
        self.y_host = np.asarray(data.y_train, np.int32)

    def _padded_test(self, data: MnistData, placement: Any) -> tuple[jax.Array, jax.Array, int]:
        # Validation is process-local: the test set goes to this process's own device.
        return super()._padded_test(data, jax.local_devices(backend=platform_of(self.settings.device_kind))[0])

    def _shard_batch(self, batch: jax.Array) -> jax.Array:
        return batch  # fed batches arrive sharded; validation batches stay on the local device

    def _eval_state(self) -> Any:
        """This process's replica of the (replicated) state, as arrays on its local device."""
        return jax.tree.map(lambda leaf: leaf.addressable_data(0), self.state)

    def _my_rows(self) -> slice:
        """Which rows of a global batch this process's devices hold (the sharding decides, not a guess)."""
        batch = self.plan.batch
        assert self.batch_sharding is not None
        spans = [index[0] for index in self.batch_sharding.addressable_devices_indices_map((batch,)).values()
                 if index is not None]
        return slice(min(s.start or 0 for s in spans), max(batch if s.stop is None else s.stop for s in spans))

    def _global_batch(self, index: np.ndarray) -> tuple[jax.Array, jax.Array]:
        """The global batch of these images (every process passes the same `index`, feeds its own rows)."""
        assert self.batch_sharding is not None
        mine = index[self.rows]
        x = jax.make_array_from_process_local_data(  # type: ignore[no-untyped-call]
            self.batch_sharding, self.x_host[mine], (len(index), *self.x_host.shape[1:])
        )
        y = jax.make_array_from_process_local_data(  # type: ignore[no-untyped-call]
            self.batch_sharding, self.y_host[mine], (len(index),))
        return x, y

    def prepare_step(self) -> Callable[[], object]:
        """The update on one global batch (results discarded)."""
        acc = self._zero_acc(self.plan.steps)
        x, y = self._global_batch(np.arange(self.plan.batch))
        self._compile_for_epochs()  # the same key draws as on one process, so the epochs shuffle alike
        return lambda: self._fed_step(self.state, acc, x, y, np.int32(0))

    def train_epoch(self, steps: int, on_step: Callable[[], None]) -> EpochOutput:
        order = np.asarray(jax.random.permutation(self.rng.get(), len(self.y_host)))
        acc = self._zero_acc(steps)
        batch = self.plan.batch
        for i in range(steps):
            x, y = self._global_batch(order[i * batch:(i + 1) * batch])
            self.state, acc = self._fed_step(self.state, acc, x, y, np.int32(i))
            on_step()
        return acc
