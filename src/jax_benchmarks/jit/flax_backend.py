"""`jit flax`: the mnist group's training, with the train step jitted and not jitted.

One model, one data path, one trainer: the mnist group's CNN, data loader and flax.nnx trainer
(`jax_benchmarks.mnist.flax_trainer.FlaxTrainer`: forward, loss, gradient and optimizer update in one step
function, the data resident on the device). Each mode trains its own trainer from the same seed (the same
initial parameters, shuffles and dropout masks) over the same data: "eager" calls the step function directly,
so every JAX operation is dispatched on its own; "jit" calls it through `jax.jit`. Per mode, in order:

- `train_epoch_{batch}x28x28_float32 [eager|jit]`: `--epochs` epochs timed one by one (`Timed.runs`), the
  first apart (it includes compiling), the others the samples; the jitted mode records how many times jax.jit
  compiled the step (once: every batch has one shape, as the trainer drops the last, partial batch), its
  speedup over eager, and its last epoch's mean loss against eager's;
- `validation_{test batch}x28x28_float32 [eager|jit]`: the trained model on the test images.

Case names come from the settings alone: building the suite (and `--list`) reads no data. `--show-jaxpr` prints
the step's jaxpr with the jitted epochs' lines; `--plot` draws the epoch times once both modes ran.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from rich.markup import escape

from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.jit.settings import JitTrainingSettings
from jax_benchmarks.measure.harness import RECORDS, Case, Fixture, Judgement, Suite, SuiteRecords, Target, Timed
from jax_benchmarks.measure.relative import relative_error
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.mnist.cases import CaseNames, data_fixture, eval_metrics, evaluating, trainer_fixture
from jax_benchmarks.mnist.data import MnistData
from jax_benchmarks.mnist.flax_trainer import EpochOutput, EvalOutput, FlaxTrainer
from jax_benchmarks.run import Run
from jax_benchmarks.store.record import Scalar

BACKEND = "flax"
DTYPE = "float32"
Mode = Literal["eager", "jit"]
MODES: tuple[Mode, ...] = ("eager", "jit")
EAGER_HOW = "the unjitted train step called directly (op-by-op dispatch)"
HEADINGS: dict[Mode, str] = {"eager": f"not jitted — {EAGER_HOW}:", "jit": "jitted — jax.jit of the same step:"}
# Both modes run the same float32 steps from the same start; XLA's fusion only reorders rounding, which training
# amplifies from epoch to epoch: the last epochs' mean losses may differ by up to 1 %.
LOSS_RTOL = 1e-2
EXPECTED_COMPILATIONS = 1  # every batch has one shape


def case_params(settings: JitTrainingSettings, mode: Mode) -> dict[str, Scalar]:
    return {
        "model": settings.model, "dataset": settings.dataset, "epochs": settings.num_epochs,
        "batch_size": settings.train_batch_size, "optimizer": settings.optimizer, "learning_rate": settings.lr,
        "schedule": settings.lr_schedule, "dry_run": settings.dry_run,
        "timed": "one epoch = every train step, synced at the end",
        **({"not_jitted": EAGER_HOW} if mode == "eager" else {}),
    }


def trained_params(trainer: FlaxTrainer, data: MnistData) -> dict[str, Scalar]:
    return {"source": data.source, "train_images": len(data.y_train), "test_images": len(data.y_test),
            "steps_per_epoch": trainer.plan.steps}


def epoch_lines(measurement: Measurement, mode: Mode) -> list[str]:
    """Every epoch's time in order: the first (timed apart) and the samples."""
    first = [] if measurement.first_call_s is None else [measurement.first_call_s]
    note = " (includes compilation)" if mode == "jit" else " (includes compiling each operation on first use)"
    return [f"  epoch {i + 1}: {format_seconds(seconds)}{note if i == 0 else ''}"
            for i, seconds in enumerate(first + list(measurement.samples_s))]


def epochs_case(settings: JitTrainingSettings, mode: Mode, trainer: Fixture[FlaxTrainer],
                data: Fixture[MnistData]) -> Case[EpochOutput]:
    names = CaseNames(settings)

    def prepare(trained: FlaxTrainer, *_: object) -> Timed[EpochOutput]:
        steps = trained.plan.steps
        return Timed(lambda: trained.train_epoch(steps, lambda: None), trained.sync, runs=settings.num_epochs)

    def judge(output: EpochOutput, measurement: Measurement, trained: FlaxTrainer, loaded: MnistData,
              records: SuiteRecords) -> Judgement:
        result = trained.read_epoch(output)
        metrics: dict[str, Scalar] = {"items_per_s": trained.plan.images_per_epoch / measurement.median_s,
                                      "final_loss": result.loss}
        checks: dict[str, Scalar] = {}
        failures: list[str] = []
        notes = [HEADINGS[mode], *epoch_lines(measurement, mode),
                 f"  last epoch: mean loss {result.loss:.4f} · train acc {result.accuracy:.2%}"]
        if mode == "jit":
            compilations = trained.compilations()
            metrics["compilations"] = compilations
            checks["expected_compilations"] = EXPECTED_COMPILATIONS
            notes.append(f"jit cache size after {settings.num_epochs} epoch(s): {compilations}")
            if compilations != EXPECTED_COMPILATIONS:
                failures.append(f"jax.jit compiled the step {compilations} time(s), expected "
                                f"{EXPECTED_COMPILATIONS} (one batch shape)")
            eager_record = records.last(names.epoch, "eager")
            eager_loss = eager_record.metrics.get("final_loss") if eager_record is not None else None
            if isinstance(eager_loss, float):  # the eager mode ran (-k may select the jitted one alone)
                diff = relative_error(result.loss, eager_loss)
                checks.update(final_loss_eager=eager_loss, final_loss_rel_diff_vs_eager=diff)
                if not diff <= LOSS_RTOL:
                    failures.append(f"last epoch's mean loss jit {result.loss:.6g} vs eager {eager_loss:.6g}: "
                                    f"relative difference {diff:.3g} > {LOSS_RTOL:g}")
            if settings.show_jaxpr:
                equations, text = trained.step_jaxpr()
                notes += [f"jaxpr of the train step for one batch of {trained.plan.batch} ({equations} equations):",
                          escape(text)]
        return Judgement(checks=checks, metrics=metrics, failures=failures, notes=notes,
                         params=trained_params(trained, loaded))

    return Case(names.epoch, prepare, judge, variant=mode, dtype=DTYPE, params=case_params(settings, mode),
                compiled=mode == "jit", speedup_over="eager", uses=(trainer, data, RECORDS))


def tested_case(settings: JitTrainingSettings, mode: Mode, trainer: Fixture[FlaxTrainer],
                    data: Fixture[MnistData]) -> Case[EvalOutput]:
    def judge(output: EvalOutput, measurement: Measurement, trained: FlaxTrainer, loaded: MnistData) -> Judgement:
        val = trained.read_eval(output)
        return Judgement(metrics=eval_metrics(val, measurement), params=trained_params(trained, loaded),
                         notes=[f"{mode}: test loss {val.loss:.4f} · test accuracy {val.accuracy:.2%}"])

    return Case(CaseNames(settings).validation, lambda trained, _data: evaluating(trained), judge, variant=mode,
                dtype=DTYPE, params=case_params(settings, mode), uses=(trainer, data))


def summary(records: SuiteRecords, names: CaseNames) -> str | None:
    """One line from the records: an epoch not jitted vs jitted, the compilation paid once, both test accuracies."""
    e, j = records.last(names.epoch, "eager"), records.last(names.epoch, "jit")
    if e is None or j is None or e.median_s is None or j.median_s is None:
        return None
    compile_text = f", compilation {format_seconds(j.compile_s)} paid once" if j.compile_s is not None else ""
    tested = [records.last(names.validation, mode) for mode in MODES]
    accuracy = [r.metrics.get("accuracy") for r in tested if r is not None]
    accuracy_text = ""
    if len(accuracy) == len(MODES) and all(isinstance(a, float) for a in accuracy):
        accuracy_text = "; test accuracy " + " / ".join(f"{a:.1%}" for a in accuracy if isinstance(a, float))
    return (f"one epoch: not jitted {format_seconds(e.median_s)}, jitted {format_seconds(j.median_s)} → "
            f"×{e.median_s / j.median_s:.1f} with jit{compile_text}{accuracy_text}")


def suites(settings: JitTrainingSettings) -> Sequence[Suite]:
    """One suite on `--device`: eager's epochs and validation, then jit's (its speedup is over eager). Each
    mode's trainer lives until its validation is judged; the data until the last case."""
    data = data_fixture(settings, keep=settings.train_images)  # the first --train-images training images
    trainers = {mode: trainer_fixture(trainer_builder(settings, mode), data, f"{mode} trainer",
                                      check=lambda loaded: settings.check_batch_fits(len(loaded.y_train)))
                for mode in MODES}
    cases: list[Case[Any]] = []
    for mode in MODES:
        cases += [epochs_case(settings, mode, trainers[mode], data), tested_case(settings, mode, trainers[mode], data)]

    def after(run: Run, records: SuiteRecords) -> None:
        line = summary(records, CaseNames(settings))
        if line is not None:
            run.log(line)
        if settings.plot:
            from jax_benchmarks.cli.plots import save_figure
            from jax_benchmarks.jit.plot import epoch_time_chart

            name = CaseNames(settings).epoch
            epochs = [r for mode in MODES if (r := records.last(name, mode)) is not None]
            path = save_figure(epoch_time_chart(epochs), f"jit_flax_{settings.model}_epoch_times")
            run.log(f"plot: {path}")

    return [Suite(Target(BACKEND, settings.device_kind), cases, after=after, fixtures=[data, *trainers.values()],
                  after_uses=(RECORDS,))]


def trainer_builder(settings: JitTrainingSettings, mode: Mode) -> Callable[[MnistData, object], FlaxTrainer]:
    """The mnist group's Flax trainer, its step jitted or called directly, from the run's seed."""
    return lambda loaded, _log: FlaxTrainer(settings, loaded, RNG_Provider(settings.seed), jit=mode == "jit")
