"""`jit flax`: one training epoch with the train step jitted and not jitted.

From the "JAX speed test" article: the same flax.nnx train step (forward, loss, gradient, Adam
update, `jax_benchmarks.jit.train_step`) is run over the same batches twice, once as the plain Python function
("eager": every JAX operation is dispatched on its own) and once through `jax.jit`. Each mode is one
harness case, timed epoch by epoch (`jax_benchmarks.jit.epochs`); `jax.jit`'s compilation cache is read before,
during and after the epochs (`jax_benchmarks.jit.jit_cache`): the last, smaller batch of an epoch has a new
shape and compiles the step a second time, unless `--drop-last` drops it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
from rich.markup import escape

from jax_benchmarks.hardware.devices import jax_device
from jax_benchmarks.errors import DataError
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed
from jax_benchmarks.run import Run
from jax_benchmarks.measure.timing import Measurement, jax_sync
from jax_benchmarks.frameworks.typed import jit_cache_size, typed_jit
from jax_benchmarks.jit import data as training_data
from jax_benchmarks.jit.batching import Batch, Batching, epoch_batches
from jax_benchmarks.jit.epochs import EpochResult, ModeTraining
from jax_benchmarks.jit.flax_report import DTYPE, Mode, case_name, case_params, judgement, summary
from jax_benchmarks.jit.jit_cache import CacheTrace
from jax_benchmarks.jit.settings import JitTrainingSettings
from jax_benchmarks.jit.train_step import TrainGraph, TrainState, TrainStep, accuracy, build_state, make_train_step, step_jaxpr

BACKEND = "flax"


@dataclass
class LoadedOnce:
    """The training data, loaded on first use; the loader's lines are kept for the run's log."""

    settings: JitTrainingSettings
    lines: list[str] = field(default_factory=list)
    _arrays: training_data.TrainingArrays | None = None

    def arrays(self) -> training_data.TrainingArrays:
        if self._arrays is None:
            # Looked up on the module at call time: tests replace `load_images` with synthetic images.
            self._arrays = training_data.load_training_arrays(self.settings, self.lines.append)
        return self._arrays

    def shape(self) -> training_data.DataShape:
        """The toy set's shape follows from the settings; MNIST's (how many images the source holds)
        is known only once it is loaded, so the CNN's data is loaded here, when its case is named."""
        if self.settings.model == "mlp":
            return training_data.toy_shape(self.settings)
        return training_data.shape_of(self.arrays())


@dataclass
class Training:
    """What both modes of one `jit flax` run share: data, batching, the initial state and the step
    (built by `setup`, the suite's untimed `before`), and each mode's training once it ran."""

    settings: JitTrainingSettings
    data: LoadedOnce
    batching: Batching
    modes: dict[str, ModeTraining] = field(default_factory=dict)
    _device: jax.Device | None = None
    _start: tuple[TrainGraph, TrainState, TrainStep] | None = None

    def setup(self, run: Run) -> None:
        arrays = self.data.arrays()
        for line in self.data.lines:
            run.log(line)
        if self.batching.steps == 0:
            raise DataError(f"--batch-size {self.settings.batch_size}: no full batch in "
                            f"{self.batching.examples} training examples")
        self._device = jax_device(self.settings.device_kind)
        graphdef, state, description = build_state(self.settings, arrays)
        state = jax.device_put(state, self._device)
        step = make_train_step(graphdef)
        self._start = graphdef, state, step
        run.log(f"data: {arrays.description}: {len(arrays.y_train):,} train / {len(arrays.y_test):,} test examples")
        run.log(f"model: {description}, batch {self.settings.batch_size}: {self.batching.describe()}")
        if self.settings.show_jaxpr:
            batch = self.batches_of_epoch(0)[0]
            equations, text = step_jaxpr(step, state, batch)
            run.log(f"jaxpr of the train step for one batch of {batch[0].shape[0]} ({equations} equations):")
            run.log(escape(text))

    @property
    def device(self) -> jax.Device:
        assert self._device is not None, "setup (the suite's before) has not run"
        return self._device

    def batches_of_epoch(self, epoch: int) -> list[Batch]:
        return epoch_batches(self.data.arrays(), self.batching, self.settings.seed, epoch, self.device)

    def timed(self, mode: Mode) -> Timed[EpochResult]:
        """A mode's epochs, each timed; the jitted mode gets a fresh jax.jit (empty cache)."""
        assert self._start is not None, "setup (the suite's before) has not run"
        _, state, step = self._start
        cache = None
        if mode == "jit":
            step = typed_jit(step)
            cache = CacheTrace(before=jit_cache_size(step))
        training = ModeTraining(mode, step, state, self.batches_of_epoch, cache)
        self.modes[mode] = training
        return Timed(training.train_epoch, jax_sync, runs=self.settings.epochs, before_each=training.prepare_epoch)

    def judge(self, mode: Mode, _result: EpochResult, measurement: Measurement) -> Judgement:
        assert self._start is not None
        training = self.modes[mode]
        training.close_epoch()
        training.measurement = measurement
        training.test_accuracy = accuracy(self._start[0], training.state, self.data.arrays(), self.device)
        return judgement(training, self.modes.get("eager") if mode == "jit" else None, self.batching)

    def report(self, run: Run, name: str) -> None:
        """The suite's `after`: the one-line comparison and, with --plot, the bar chart."""
        eager, jitted = self.modes.get("eager"), self.modes.get("jit")
        if eager is not None and jitted is not None:
            run.log(summary(eager, jitted))
        if self.settings.plot:
            from jax_benchmarks.cli.plots import save_figure
            from jax_benchmarks.jit.plot import epoch_time_chart

            records = [r for r in run.records if r.backend == BACKEND and r.case == name]
            path = save_figure(epoch_time_chart(records), f"jit_flax_{self.settings.model}_epoch_times")
            run.log(f"plot: {path}")


def suites(settings: JitTrainingSettings) -> list[Suite]:
    """One suite on `--device`: the eager case, then the jitted one (its speedup is over eager)."""
    data = LoadedOnce(settings)
    shape = data.shape()
    batching = Batching(shape.train_examples, settings.batch_size, settings.drop_last)
    training = Training(settings, data, batching)
    name = case_name(settings.model, shape, batching)
    modes: tuple[Mode, ...] = ("eager", "jit")
    cases: list[Case[EpochResult]] = [
        Case(name, functools.partial(training.timed, mode), functools.partial(training.judge, mode),
             variant=mode, dtype=DTYPE, params=case_params(settings, shape, batching, mode),
             compiled=mode == "jit", speedup_over="eager")
        for mode in modes
    ]
    after: Callable[[Run], None] = functools.partial(training.report, name=name)
    return [Suite(Target(BACKEND, settings.device_kind), cases, before=training.setup, after=after)]
