"""How an epoch of `jit flax` splits into batches, and the shuffled batches of one epoch."""

from __future__ import annotations

from dataclasses import dataclass

import jax
import numpy as np

from jax_benchmarks.jit.data import TrainingArrays

Batch = tuple[jax.Array, jax.Array]


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


def epoch_batches(data: TrainingArrays, batching: Batching, seed: int, epoch: int,
                  device: jax.Device) -> list[Batch]:
    """This epoch's shuffled batches, already on the device (the same in both modes)."""
    order = np.random.default_rng([seed, epoch]).permutation(batching.examples)[: batching.used]
    batches = []
    for start in range(0, batching.used, batching.batch_size):
        index = order[start : start + batching.batch_size]
        batches.append((jax.device_put(data.x_train[index], device), jax.device_put(data.y_train[index], device)))
    return batches
