"""The cases of `mnist flax|pytorch|all`, `mnist evaluate` and `mnist preprocess-images`, on the core harness.

A training suite is, in order (each a `Case`, so `--case/-k` selects any of them):

1. `load_{dataset}_28x28_uint8`: the data set through the data pipeline, timed once;
2. `matmul_peak_2048x2048_float32` (CPU only): NumPy's float32 matmul rate, the peak the training's
   GFLOP/s are a share of (on a GPU the datasheet peak is used, `src/jax_benchmarks/mnist/throughput.py`);
3. `train_step_{batch}x28x28_float32`: one optimizer step on one batch, measured (jax.jit's compile apart);
4. per epoch: `train_epoch_{batch}x28x28_float32` (timed once; `epoch` in params), then
   `validation_{test batch}x28x28_float32` on every test image (process 0 of a job only).

Names come from the settings alone (building a suite reads no data); the data set's sizes are in params.

What the cases share are the suite's fixtures (`jax_benchmarks.mnist.fixture`), alive while the suite runs:
the run (handed over by `before`), the data (built by the load case, which times it, or untimed by the first
case that needs it), the trainer (built on first use) and the experiment tracker. A figure one case needs from
an earlier one (the peak, the step's median, the epoch's figures for its validation line, the last
validation's predictions for the plot) is read from what the harness recorded for that case (`Recorded`);
no judge writes anything down for another.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

import numpy as np

from jax_benchmarks.errors import DataError, SettingsError, TrainingDiverged
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed, matches
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.mnist.checkpoints import checkpoint_path, metadata_path, save_atomically, write_atomically
from jax_benchmarks.mnist.cluster import process_params
from jax_benchmarks.mnist.data.arrays import MnistData
from jax_benchmarks.mnist.fixture import Fixture, closing
from jax_benchmarks.mnist.settings import (
    CHECKPOINTS_DIR, DataSettings, EvaluateSettings, MnistSettings, TrainingSettings,
)
from jax_benchmarks.mnist.throughput import PEAK_SIZE, gpu_peak, peak_matmul_flops, share_text, throughput
from jax_benchmarks.mnist.trainer import (
    EpochOutput, EvalOutput, EvalResult, Plan, Trainer, check_batch_fits,
)
from jax_benchmarks.store.results import Record, Run, Scalar
from jax_benchmarks.tracking import Tracker, start_tracking

Log = Callable[[str], None]
IMAGE = "28x28"
BuildTrainer = Callable[[MnistData, Log], Trainer[EpochOutput, EvalOutput]]


def read_data(settings: DataSettings, log: Log) -> MnistData:
    """The data pipeline's `load_data`, the one way every command reads MNIST (tests replace this function
    with synthetic data)."""
    from jax_benchmarks.mnist.data import load_data

    return load_data(settings.dataset, settings.data_source, settings.data_dir, log=log)


class CaseNames:
    """The `{op}_{shape}_{dtype}` names of a run's cases, from its settings."""

    def __init__(self, settings: DataSettings) -> None:
        self.load = f"load_{settings.dataset}_{IMAGE}_uint8"
        self.peak = f"matmul_peak_{PEAK_SIZE}x{PEAK_SIZE}_float32"
        if isinstance(settings, TrainingSettings):
            self.step = f"train_step_{settings.train_batch_size}x{IMAGE}_float32"
            self.epoch = f"train_epoch_{settings.train_batch_size}x{IMAGE}_float32"
            self.validation = f"validation_{settings.test_batch_size}x{IMAGE}_float32"


# -------------------------------------------------------------------------------------------- fixtures ---

def run_fixture() -> Fixture[Run]:
    """The run the cases log and record on: handed over by the suite's `before`."""

    def missing() -> Run:
        raise RuntimeError("the suite's before hands the run over before any case runs")

    return Fixture("run", missing)


def data_fixture(settings: DataSettings, run: Fixture[Run]) -> Fixture[MnistData]:
    return Fixture("data", lambda: read_data(settings, run.get().log))


@dataclass(frozen=True)
class Recorded:
    """What the harness recorded for the cases of one target and variant of this run, newest first."""

    run: Fixture[Run]
    backend: str
    variant: str | None

    def last(self, case: str, **params: Scalar) -> Record | None:
        for record in reversed(self.run.get().records):
            if (record.backend, record.case, record.variant) == (self.backend, case, self.variant) and all(
                    record.params.get(k) == v for k, v in params.items()):
                return record
        return None

    def count(self, case: str) -> int:
        return sum((r.backend, r.case, r.variant) == (self.backend, case, self.variant)
                   for r in self.run.get().records)

    def output(self, case: str) -> object:
        """The judgement output kept for the newest record of `case` (None when there is none)."""
        for kept in reversed(self.run.get().outputs):
            record = kept.record
            if (record.backend, record.case, record.variant) == (self.backend, case, self.variant):
                return kept.value
        return None


def load_case(settings: DataSettings, data: Fixture[MnistData], variant: str | None) -> Case[MnistData]:
    """The data set through the data pipeline: this case builds the suite's data fixture, timed once."""

    def judge(loaded: MnistData, measurement: Measurement) -> Judgement:
        return Judgement(
            params={"source": loaded.source},
            metrics={"train_images": len(loaded.y_train), "test_images": len(loaded.y_test), "mean": loaded.mean,
                     "std": loaded.std},
            notes=[f"data: {len(loaded.y_train):,} train + {len(loaded.y_test):,} test images ready in "
                   f"{measurement.median_s:.2f} s"],
        )

    return Case(CaseNames(settings).load, lambda: Timed(data.build, once=True), judge, variant=variant,
                dtype="uint8", params={"dataset": settings.dataset, **process_params(settings)})


def data_suite(settings: DataSettings, backend: str) -> Suite:
    """`mnist preprocess-images`: the load case, then what training will see."""
    run = run_fixture()
    data = data_fixture(settings, run)

    def after(_run: Run) -> None:
        loaded = data.get()
        counts = np.bincount(np.asarray(loaded.y_train), minlength=10)
        _run.log(
            f"source: {loaded.source}\n"
            f"train: {loaded.images_train.shape} · test: {loaded.images_test.shape} uint8 images, "
            f"normalized on reading to float32 [N, 28, 28, 1]\n"
            f"normalization (training set): mean {loaded.mean:.4f} · std {loaded.std:.4f}\n"
            f"train images per class: {' '.join(str(int(c)) for c in counts)}"
        )

    return Suite(Target(backend, settings.device_kind), [load_case(settings, data, None)], before=run.provide,
                 after=after, context=lambda: closing(run, data))


# ------------------------------------------------------------------------------------------ training ---

@dataclass(frozen=True)
class Training(Generic[EpochOutput, EvalOutput]):
    """The fixtures one backend's training suite shares, and what its cases recorded."""

    settings: MnistSettings
    backend: str
    run: Fixture[Run]
    data: Fixture[MnistData]
    trainer: Fixture[Trainer[EpochOutput, EvalOutput]]
    tracker: Fixture[Tracker]
    warm: Fixture[None]  # the step and what the epochs use are compiled
    gpu_peak: Fixture[tuple[float | None, str]]
    recorded: Recorded

    @property
    def names(self) -> CaseNames:
        return CaseNames(self.settings)

    def log(self, line: str) -> None:
        self.run.get().log(line)

    def plan(self) -> Plan:
        return self.trainer.get().plan

    def data_params(self) -> dict[str, Scalar]:
        """The params the data decides, recorded with every training case."""
        data, shape = self.data.get(), self.plan()
        return {"source": data.source, "train_images": len(data.y_train), "test_images": len(data.y_test),
                "batch": shape.batch, "steps_per_epoch": shape.steps}

    def peak_gflops(self) -> float | None:
        """The float32 peak the training's GFLOP/s are a share of: the GPU's datasheet, or on a CPU the peak
        case's record (None when -k did not select it)."""
        if self.settings.device_kind == "gpu":
            return self.gpu_peak.get()[0]
        record = self.recorded.last(self.names.peak)
        gflops = record.metrics.get("gflops") if record is not None else None
        return float(gflops) if isinstance(gflops, (int, float)) else None


def training(settings: MnistSettings, backend: str, variant: str | None,
             build: BuildTrainer[EpochOutput, EvalOutput]) -> Training[EpochOutput, EvalOutput]:
    run = run_fixture()
    data = data_fixture(settings, run)
    tracker: Fixture[Tracker] = Fixture(
        # One process of a job tracks for all of them (its figures are the job's: global loss).
        "tracker", lambda: start_tracking(settings.comet if settings.lead else "off", name=f"mnist-{backend}",
                                          log=run.get().log),
        teardown=lambda t: t.end())

    def make_trainer() -> Trainer[EpochOutput, EvalOutput]:
        loaded = data.get()
        if settings.SAVES_MODEL:
            check_batch_fits(settings, len(loaded.y_train))  # before a model is built
        trainer = build(loaded, run.get().log)
        summary = trainer.summary()
        if settings.SAVES_MODEL:
            shape = trainer.plan
            tracker.get().log_parameters({
                **training_params(settings), "source": loaded.source, "train_images": len(loaded.y_train),
                "test_images": len(loaded.y_test), "batch": shape.batch, "steps_per_epoch": shape.steps})
            tracker.get().log_text(summary)
        run.get().log(summary)
        return trainer

    trainer: Fixture[Trainer[EpochOutput, EvalOutput]] = Fixture("trainer", make_trainer)
    return Training(settings, backend, run, data, trainer, tracker,
                    warm=Fixture("warm", lambda: trainer.get().warm_up()),
                    gpu_peak=Fixture("gpu peak", lambda: gpu_peak(settings.precision)),
                    recorded=Recorded(run, backend, variant))


def training_params(settings: MnistSettings) -> dict[str, Scalar]:
    return {
        "dataset": settings.dataset, "epochs": settings.num_epochs, "optimizer": settings.optimizer,
        "learning_rate": settings.lr, "schedule": settings.lr_schedule, "momentum": settings.momentum,
        "seed": settings.seed, "dry_run": settings.dry_run, "devices": settings.device_count,
        **process_params(settings),
    }


def peak_case(settings: MnistSettings, variant: str | None) -> Case[np.ndarray]:
    def prepare() -> Timed[np.ndarray]:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
        b = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
        return Timed(lambda: a @ b)

    def judge(_product: np.ndarray, measurement: Measurement) -> Judgement:
        gflops = peak_matmul_flops() / measurement.median_s / 1e9
        return Judgement(metrics={"gflops": gflops}, notes=[
            f"float32 matmul peak of this machine: {gflops:.1f} GFLOP/s (NumPy {PEAK_SIZE}², all cores)"])

    return Case(CaseNames(settings).peak, prepare, judge, variant=variant, dtype="float32",
                params={"library": "numpy", **process_params(settings)})


def step_case(t: Training[EpochOutput, EvalOutput], variant: str | None, compiled: bool) -> Case[object]:
    def prepare() -> Timed[object]:
        trainer = t.trainer.get()
        call = trainer.prepare_step()
        t.warm.provide(None)  # the step's first timed call compiles it (recorded as compile_s)
        return Timed(call, trainer.sync, fixed_count=trainer.fixed_count)

    def judge(_result: object, measurement: Measurement) -> Judgement:
        batch = t.plan().batch
        figures = throughput(batch, measurement.median_s, t.peak_gflops())
        first = "compile" if compiled else "first call"
        return Judgement(metrics=figures, params=t.data_params(), notes=[
            f"train step (batch {batch}): {measurement.median_s * 1e3:.1f} ms median, "
            f"{first} {measurement.compile_s or 0.0:.2f} s above it · {figures['images_per_s']:.0f} images/s"])

    return Case(t.names.step, prepare, judge, variant=variant, dtype="float32",
                params=training_params(t.settings), compiled=compiled)


def epoch_line(epoch: int, epochs: int, seconds: float, metrics: dict[str, Scalar]) -> str:
    """The log line of a trained epoch, from its recorded figures."""
    overhead = f" · loop overhead {metrics['loop_overhead']:+.1%}" if "loop_overhead" in metrics else ""
    figures = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
    return (f"epoch {epoch}/{epochs}: {seconds:.2f} s · {figures['images_per_s']:.0f} images/s · "
            f"{figures['gflops']:.1f} GFLOP/s{share_text(figures)}{overhead} · "
            f"train loss {figures['loss']:.4f} acc {figures['accuracy']:.2%}")


def epoch_case(t: Training[EpochOutput, EvalOutput], variant: str | None, epoch: int,
               validated: bool) -> Case[EpochOutput]:
    settings = t.settings

    def prepare() -> Timed[EpochOutput]:
        trainer = t.trainer.get()
        trainer.end_step()  # the step case's timed steps leave no trace in training
        t.warm.get()
        steps, progress = trainer.plan.steps, t.run.get().progress

        def train() -> EpochOutput:
            progress.start(f"epoch {epoch}/{settings.num_epochs}", steps)
            try:
                return trainer.train_epoch(steps, progress.advance)
            finally:
                progress.stop()

        return Timed(train, trainer.sync, once=True)

    def judge(output: EpochOutput, measurement: Measurement) -> Judgement:
        result, seconds, steps = t.trainer.get().read_epoch(output), measurement.median_s, t.plan().steps
        if not math.isfinite(result.loss):
            raise TrainingDiverged(
                f"training diverged: the loss of epoch {epoch} is {result.loss} ({settings.optimizer}, learning "
                f"rate {settings.lr:g}, momentum {settings.momentum:g}); no checkpoint was saved and the epoch "
                "was not recorded; try a smaller --learning-rate"
            )
        figures = throughput(result.images, seconds, t.peak_gflops())
        metrics: dict[str, Scalar] = {**figures, "loss": result.loss, "accuracy": result.accuracy}
        step = t.recorded.last(t.names.step)
        if step is not None and step.median_s is not None:  # the step case ran
            metrics["loop_overhead"] = seconds / (step.median_s * steps) - 1.0
        tracker = t.tracker.get()
        for i, loss in enumerate(result.step_losses):
            tracker.log_metrics({"train_step_loss": loss}, step=(epoch - 1) * steps + i + 1, epoch=epoch)
        tracker.log_metrics({"train_loss": result.loss, "train_accuracy": result.accuracy,
                             "images_per_s": figures["images_per_s"]}, step=epoch * steps, epoch=epoch)
        # With validation, its case logs this line completed by the test figures.
        line = epoch_line(epoch, settings.num_epochs, seconds, metrics)
        return Judgement(metrics=metrics, params=t.data_params(), notes=[] if validated else [line])

    return Case(t.names.epoch, prepare, judge, variant=variant, dtype="float32",
                params={**training_params(settings), "epoch": epoch})


def eval_metrics(val: EvalResult, measurement: Measurement) -> dict[str, Scalar]:
    return {"loss": val.loss, "accuracy": val.accuracy, "images": val.images,
            "images_per_s": val.images / measurement.median_s}


def evaluating(trainer: Trainer[EpochOutput, EvalOutput]) -> Timed[EvalOutput]:
    """Test the model on every test image (a dry run: a few batches)."""
    limit = trainer.plan.eval_limit
    return Timed(lambda: trainer.evaluate(limit), trainer.sync, once=True)


def validation_case(t: Training[EpochOutput, EvalOutput], variant: str | None, epoch: int) -> Case[EvalOutput]:
    """The model after training epoch `epoch`, on the test images; the predictions are kept for the plot."""

    def judge(output: EvalOutput, measurement: Measurement) -> Judgement:
        val = t.trainer.get().read_eval(output)
        t.tracker.get().log_metrics({"val_loss": val.loss, "val_accuracy": val.accuracy},
                                    step=epoch * t.plan().steps, epoch=epoch)
        trained = t.recorded.last(t.names.epoch, epoch=epoch)
        line = (epoch_line(epoch, t.settings.num_epochs, trained.median_s, trained.metrics) + " · "
                if trained is not None and trained.median_s is not None else f"epoch {epoch}: ")
        return Judgement(metrics=eval_metrics(val, measurement), params=t.data_params(), output=val,
                         notes=[f"{line}test loss {val.loss:.4f} acc {val.accuracy:.2%}"])

    return Case(t.names.validation, lambda: evaluating(t.trainer.get()), judge, variant=variant,
                dtype="float32", params={**training_params(t.settings), "epoch": epoch})


def training_cases(t: Training[EpochOutput, EvalOutput], variant: str | None, compiled: bool) -> list[Case[Any]]:
    """Load, peak (CPU), step, then each epoch and its validation; refuses a validation selected without
    the epochs it validates."""
    settings, names = t.settings, t.names
    validation = validation_case(t, variant, 1)
    validating = settings.lead and matches(validation, settings.case_patterns)
    if validating and not matches(epoch_case(t, variant, 1, True), settings.case_patterns):
        raise SettingsError("--case", f"{settings.case}: {names.validation} validates the model after each epoch; "
                                      f"select {names.epoch} too (e.g. -k train_epoch,validation)")
    cases: list[Case[Any]] = [load_case(settings, t.data, variant)]
    if settings.device_kind == "cpu":
        cases.append(peak_case(settings, variant))
    cases.append(step_case(t, variant, compiled))
    for epoch in range(1, settings.num_epochs + 1):
        cases.append(epoch_case(t, variant, epoch, validating))
        if settings.lead:  # a job's other processes validate nothing: process 0's figures are the job's
            cases.append(validation_case(t, variant, epoch))
    return cases


def training_suite(settings: MnistSettings, backend: str, variant: str | None,
                   build: BuildTrainer[EpochOutput, EvalOutput], *, compiled: bool,
                   finish: Callable[[], None] | None = None) -> Suite:
    """`mnist flax|pytorch`: the training cases; `after` saves the checkpoint and the plot once every epoch is
    trained, then `finish` (e.g. end the worker processes). The fixtures live as long as the suite: a run that
    stops early (Ctrl-C, out of memory, a failed check) still ends its experiment, so an offline comet.ml
    archive is complete."""
    t = training(settings, backend, variant, build)

    def before(run: Run) -> None:
        t.run.provide(run)
        if settings.device_kind == "gpu":
            run.log(t.gpu_peak.get()[1])

    def after(run: Run) -> None:
        archive = t.tracker.close()
        if isinstance(archive, Path):
            run.log(f"comet.ml offline archive: {archive}")
        try:
            save_outputs(t, run)
        finally:
            if finish is not None:
                finish()

    return Suite(Target(backend, settings.device_kind), training_cases(t, variant, compiled), before=before,
                 after=after, context=lambda: closing(t.run, t.data, t.tracker, t.trainer, t.warm, t.gpu_peak))


def save_outputs(t: Training[EpochOutput, EvalOutput], run: Run) -> None:
    """The checkpoint and its metadata, the prediction plot and the run's last line, once every epoch trained."""
    from jax_benchmarks.mnist.plots import prediction_grid

    settings, names = t.settings, t.names
    trained = t.recorded.count(names.epoch)
    if trained < settings.num_epochs:
        run.log(f"no checkpoint saved: {trained} of {settings.num_epochs} epochs trained (--case {settings.case})")
        return
    trainer, data = t.trainer.get(), t.data.get()
    path = checkpoint_path(t.backend, settings.dataset)
    if settings.multi_process:
        # Every process of a job writes its part of one JAX checkpoint of global arrays, jointly, to one path
        # (orbax's own temporary folder and rename keep it atomic); a unique name per process would split it.
        saved = trainer.save(path)
    else:
        saved = save_atomically(trainer, path)
    if not settings.lead:
        return
    val = t.recorded.output(names.validation)
    assert val is None or isinstance(val, EvalResult)
    meta = {
        "backend": t.backend, "dataset": settings.dataset, "source": data.source, "mean": data.mean,
        "std": data.std, "run_id": run.run_id, "epochs": settings.num_epochs, "dry_run": settings.dry_run,
        **({"test_accuracy": val.accuracy} if val is not None else {}),
    }
    write_atomically(metadata_path(path), json.dumps(meta, indent=2).encode())
    run.log(f"checkpoint: {saved}")
    last = t.recorded.last(names.epoch, epoch=settings.num_epochs)
    seconds = last.median_s if last is not None and last.median_s is not None else math.nan
    speed = f"{trainer.plan.images_per_epoch / seconds:.0f} images/s · epoch {seconds:.2f} s"
    if val is None:
        run.log(f"[bold]{t.backend}: {speed} (no validation selected)[/]")
        return
    n = min(25, val.images)
    plot = prediction_grid(
        data.x_test[:n], data.y_test[:n], val.predictions[:n],
        title=f"{t.backend} · {settings.dataset} · test accuracy {val.accuracy:.2%}",
        name=f"mnist_{t.backend}_{settings.dataset}_predictions",
    )
    run.log(f"plot: {plot}")
    run.log(f"[bold]{t.backend}: test accuracy {val.accuracy:.2%} on {val.images} images · {speed}[/]")


# -------------------------------------------------------------------------------------- evaluation ---

def evaluation_suite(settings: MnistSettings, backend: str, build: BuildTrainer[EpochOutput, EvalOutput]) -> Suite:
    """`mnist evaluate <backend>`: load the data, reload the saved parameters (the checkpoint fixture), test them."""
    t = training(settings, backend, "checkpoint", build)
    path = checkpoint_path(backend, settings.dataset)

    def reload() -> dict[str, object]:
        trainer = t.trainer.get()
        try:
            meta: dict[str, object] = json.loads(metadata_path(path).read_text())
            trainer.load(path)
        except Exception as exc:  # anything a damaged or foreign checkpoint raises (orbax, torch, json, OSError)
            reason = (str(exc).strip().splitlines() or [""])[0][:200]
            raise DataError(
                f"the {backend} checkpoint {path} is corrupt or does not fit this model "
                f"({type(exc).__name__}: {reason}); train a new one with `mnist {backend} --dataset {settings.dataset}`"
            ) from None
        return meta

    checkpoint = Fixture("checkpoint", reload)

    def before(run: Run) -> None:
        t.run.provide(run)
        if not metadata_path(path).exists():
            raise DataError(
                f"no {backend} checkpoint for {settings.dataset} under {CHECKPOINTS_DIR}/: "
                f"train one first with `mnist {backend} --dataset {settings.dataset}`"
            )

    def prepare() -> Timed[EvalOutput]:
        checkpoint.get()
        return evaluating(t.trainer.get())

    def judge(output: EvalOutput, measurement: Measurement) -> Judgement:
        val = t.trainer.get().read_eval(output)
        trained_on = checkpoint.get().get("source")
        return Judgement(metrics=eval_metrics(val, measurement), output=val,
                         params={"trained_on": trained_on if isinstance(trained_on, str) else None})

    def after(run: Run) -> None:
        val = t.recorded.output(t.names.validation)
        if not isinstance(val, EvalResult):  # -k selected the load case only
            return
        at_save = checkpoint.get().get("test_accuracy")
        then = f"{at_save:.2%}" if isinstance(at_save, float) else "not recorded"
        run.log(f"[bold]{backend}: checkpoint {path} · test accuracy {val.accuracy:.2%} on {val.images} images "
                f"({t.data.get().source}); at save time it was {then}[/]")

    cases: list[Case[Any]] = [
        load_case(settings, t.data, "checkpoint"),
        Case(t.names.validation, prepare, judge, variant="checkpoint", dtype="float32",
             params={"checkpoint": str(path)}),
    ]
    return Suite(Target(backend, settings.device_kind), cases, before=before, after=after,
                 context=lambda: closing(t.run, t.data, t.trainer, checkpoint))


def mnist_suites(settings: MnistSettings, backend: str, variant: str | None,
                 build: BuildTrainer[EpochOutput, EvalOutput], *, compiled: bool,
                 finish: Callable[[], None] | None = None) -> Sequence[Suite]:
    """A backend's one suite: evaluation for `mnist evaluate` (its settings say so), else training."""
    if isinstance(settings, EvaluateSettings):
        return [evaluation_suite(settings, backend, build)]
    return [training_suite(settings, backend, variant, build, compiled=compiled, finish=finish)]
