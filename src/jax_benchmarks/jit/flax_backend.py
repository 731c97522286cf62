"""`jit flax`: the mnist group's training, with the train step not jitted and jitted.

One model, one data path, one trainer: the mnist group's CNN, data loader and flax.nnx trainer
(`jax_benchmarks.training.flax_trainer.FlaxTrainer`: forward, loss, gradient and optimizer update in one step
function, the data resident on the device). Each mode trains its own trainer from the same seed (the same
initial parameters, shuffles and dropout masks) over the same data: "eager" calls the step function directly,
so every JAX operation is dispatched on its own; "jit" calls it through `jax.jit`.

The cases are the ones mnist trains with (`jax_benchmarks.training.cases`): once, the data set's load and (CPU) the
float32 peak (`suite_data`); then per mode (eager, then jit) `training_cases`: `train_step_{batch}x28x28_float32`
(jax.jit's compile timed apart), per epoch `train_epoch_{batch}x28x28_float32` (timed once, `epoch` in params) and
`validation_{test batch}x28x28_float32`. The jitted mode's step and epochs record their speedup over eager's,
and one comparison judge (`against_eager`) judges its last epoch: jax.jit compiled the step exactly once, the
last epoch's mean loss is within 1 % of eager's when eager ran, and `--show-jaxpr`'s text.

Case names come from the settings alone: building the suite (and `--list`) reads no data. `--plot` draws the epoch
times once both modes ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from rich.markup import escape

from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.jit.plot import epoch_figure
from jax_benchmarks.jit.settings import JitTrainingSettings
from jax_benchmarks.measure.harness import RECORDS, Case, Fixture, Judgement, Suite, SuiteRecords, Target
from jax_benchmarks.measure.relative import relative_error
from jax_benchmarks.training.cases import CaseNames, Comparison, suite_data, trainer_fixture, training_cases
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.training.flax_trainer import FlaxTrainer
from jax_benchmarks.training.trainer import EpochResult
from jax_benchmarks.run import Run
from jax_benchmarks.store.record import Record, Scalar, first_call_extra_s

BACKEND = "flax"
Mode = Literal["eager", "jit"]
MODES: tuple[Mode, ...] = ("eager", "jit")
EAGER_HOW = "the unjitted train step called directly (op-by-op dispatch)"
# Both modes run the same float32 steps from the same start; XLA's fusion only reorders rounding, which training
# amplifies from epoch to epoch: the last epochs' mean losses may differ by up to 1 %.
LOSS_RTOL = 1e-2
EXPECTED_COMPILATIONS = 1  # every batch has one shape


def mode_params(settings: JitTrainingSettings, mode: Mode) -> dict[str, Scalar]:
    """What jit flax's cases record beside mnist's training params: the model, how the eager step runs, and on a
    CPU the convolution kernels in effect (the settings say which: the CLI set XLA_FLAGS before JAX loaded)."""
    return {"model": settings.model, **({"not_jitted": EAGER_HOW} if mode == "eager" else {}),
            **({"xla_cpu_conv": settings.xla_cpu_conv} if settings.device_kind == "cpu" else {})}


def against_eager(settings: JitTrainingSettings) -> Callable[[FlaxTrainer, EpochResult, Record | None], Judgement]:
    """The jitted mode's last epoch against the eager mode's (`eager`: its record of the same epoch, handed over by
    the training cases that declared both): jax.jit compiled the step once (one batch shape), the last epoch's mean
    loss within `LOSS_RTOL` of eager's when eager ran (-k may select the jitted mode alone); with --show-jaxpr, the
    step's jaxpr."""

    def judge(trained: FlaxTrainer, result: EpochResult, eager: Record | None) -> Judgement:
        compilations = trained.compilations()
        checks: dict[str, Scalar] = {"expected_compilations": EXPECTED_COMPILATIONS}
        failures: list[str] = []
        notes = [f"jit cache size after {settings.num_epochs} epoch(s): {compilations}"]
        if compilations != EXPECTED_COMPILATIONS:
            failures.append(f"jax.jit compiled the step {compilations} time(s), expected {EXPECTED_COMPILATIONS} "
                            "(one batch shape)")
        eager_loss = None if eager is None else eager.metrics.get("loss")
        if isinstance(eager_loss, float):
            diff = relative_error(result.loss, eager_loss)
            checks.update(final_loss_eager=eager_loss, final_loss_rel_diff_vs_eager=diff)
            if not diff <= LOSS_RTOL:
                failures.append(f"last epoch's mean loss jit {result.loss:.6g} vs eager {eager_loss:.6g}: "
                                f"relative difference {diff:.3g} > {LOSS_RTOL:g}")
        if settings.show_jaxpr:
            equations, text = trained.step_jaxpr()
            notes += [f"jaxpr of the train step for one batch of {trained.plan.batch} ({equations} equations):",
                      escape(text)]
        return Judgement(checks=checks, metrics={"compilations": compilations}, failures=failures, notes=notes)

    return judge


def summary(records: SuiteRecords, names: CaseNames, epochs: int) -> tuple[str | None, list[Record]]:
    """One line from the records of the suite's cases `names`: an epoch not jitted vs jitted (`epoch_figure`: the
    median over the epochs), the compilation paid once (the jitted step's, beside eager's own first step above its
    steady ones), the last test accuracy of each mode;
    and the epoch records it read, eager's then jit's, each mode's in order (what `--plot` draws)."""
    timed = {mode: [r for n in range(1, epochs + 1) if (r := records.last(names.epoch, mode, epoch=n)) is not None]
             for mode in MODES}
    step, eager_step = records.last(names.step, "jit"), records.last(names.step, "eager")
    tested = [records.last(names.validation, mode) for mode in MODES]
    every = [r for mode in MODES for r in timed[mode]]
    eager, jitted = (epoch_figure(timed[mode]) for mode in MODES)
    if eager is None or jitted is None:
        return None, every
    e, j = eager[0], jitted[0]
    compile_text = f", compilation {format_seconds(step.compile_s)} paid once" if step and step.compile_s else ""
    eager_first = first_call_extra_s(eager_step) if eager_step else None
    if compile_text and eager_first:
        compile_text += f" (eager's first step {format_seconds(eager_first)} above its steady ones)"
    accuracy = [a for r in tested if r is not None and isinstance(a := r.metrics.get("accuracy"), float)]
    accuracy_text = "; test accuracy " + " / ".join(f"{a:.1%}" for a in accuracy) if len(accuracy) == 2 else ""
    return (f"one epoch: not jitted {format_seconds(e)}, jitted {format_seconds(j)} → "
            f"×{e / j:.1f} with jit{compile_text}{accuracy_text}"), every


def suites(settings: JitTrainingSettings) -> Sequence[Suite]:
    """One suite on `--device`: the data's load and the peak, once; then eager's step, epochs and validations, then
    jit's (its speedup is over eager's, and `against_eager` judges its last epoch). Each mode's trainer lives until
    its last validation is judged; the data until the last case. `after` looks the records up by the case names
    the suite's data declared (`shared.names`)."""
    shared = suite_data(settings, None, keep=settings.train_images)  # the first --train-images training images
    names, epochs, plot = shared.names, settings.num_epochs, settings.plot
    cases: list[Case[Any]] = list(shared.cases)
    fixtures: list[Fixture[Any]] = [shared.data, shared.peak]
    for mode in MODES:
        params = mode_params(settings, mode)
        compare = Comparison("eager", against_eager(settings)) if mode == "jit" else None
        build = trainer_builder(settings, mode)
        trainer = trainer_fixture(build, shared.data, f"{mode} trainer",
                                  check=lambda loaded: settings.check_batch_fits(len(loaded.y_train)))
        trained, own = training_cases(settings, trainer, mode, shared=shared, compiled=mode == "jit", params=params,
                                      compare=compare)
        cases += trained
        fixtures += [trainer, *own]

    def after(run: Run, records: SuiteRecords) -> None:
        line, timed = summary(records, names, epochs)
        if line is not None:
            run.log(line)
        if plot:
            from jax_benchmarks.cli.plots import save_figure
            from jax_benchmarks.jit.plot import epoch_time_chart

            path = save_figure(epoch_time_chart(timed), f"jit_flax_{settings.model}_epoch_times")
            run.log(f"plot: {path}")

    return [Suite(Target(BACKEND, settings.device_kind), cases, after=after, fixtures=fixtures,
                  after_uses=(RECORDS,))]


def trainer_builder(settings: JitTrainingSettings, mode: Mode) -> Callable[[MnistData, object], FlaxTrainer]:
    """The mnist group's Flax trainer, its step jitted or called directly, from the run's seed."""
    return lambda loaded, _log: FlaxTrainer(settings, loaded, RNG_Provider(settings.seed), jit=mode == "jit")
