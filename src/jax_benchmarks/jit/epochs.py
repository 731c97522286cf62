"""The epoch loop of `jit flax`: one mode (eager or jit) trained epoch by epoch.

The harness times `train_epoch` exactly `--epochs` times (`Timed.runs`): the first epoch apart, as it
includes compilation, the others as the samples. Each epoch's shuffled batches are moved to the
device by `prepare_epoch`, untimed, before it; the epoch is synced at its end, not per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp

from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.frameworks.typed import jit_cache_size
from jax_benchmarks.jit.batching import Batch
from jax_benchmarks.jit.jit_cache import CacheTrace
from jax_benchmarks.jit.train_step import TrainState, TrainStep

EpochResult = tuple[TrainState, list[jax.Array]]


@dataclass
class ModeTraining:
    """One mode's training from the shared initial state: its state, losses and jit cache over the epochs."""

    variant: str
    step: TrainStep
    state: TrainState
    batches_of_epoch: Callable[[int], list[Batch]]
    cache: CacheTrace | None = None  # jax.jit's cache, for the jitted step
    losses: list[float] = field(default_factory=list)  # mean loss of each finished epoch
    measurement: Measurement | None = None
    test_accuracy: float | None = None
    epochs_done: int = 0
    _batches: list[Batch] = field(default_factory=list)
    _step_losses: list[jax.Array] = field(default_factory=list)

    def prepare_epoch(self) -> None:
        """Untimed: close the epoch just trained, move the next epoch's batches to the device."""
        self.close_epoch()
        self._batches = []  # free the last epoch's batches before the next ones are made
        self._batches = self.batches_of_epoch(self.epochs_done)

    def train_epoch(self) -> EpochResult:
        """Timed: every train step of one epoch; the caller syncs the returned state and losses."""
        observe = self.cache if self.cache is not None and self.epochs_done == 0 else None
        state, losses = self.state, []
        for x, y in self._batches:
            state, loss = self.step(state, x, y)
            losses.append(loss)
            if observe is not None:
                observe.record_step(self.step)
        self.state, self._step_losses = state, losses
        self.epochs_done += 1
        return state, losses

    def close_epoch(self) -> None:
        """Untimed bookkeeping of the epoch just trained: its mean loss, the jit cache after it."""
        if not self._step_losses:
            return
        self.losses.append(float(jnp.mean(jnp.stack(self._step_losses))))
        self._step_losses = []
        if self.cache is not None:
            self.cache.after_epoch.append(jit_cache_size(self.step))


def epoch_seconds(measurement: Measurement) -> list[float]:
    """Every epoch's time in order: the first epoch (timed apart) and the samples."""
    first = [] if measurement.first_call_s is None else [measurement.first_call_s]
    return first + list(measurement.samples_s)
