"""The cases of `mnist flax|pytorch|all`, `mnist evaluate` and `mnist preprocess-images`, on the core harness.

A training suite is, in order (each a `Case`, so `--case/-k` selects any of them):

1. `load_{dataset}_28x28_uint8`: the data set through the data pipeline, timed once;
2. `matmul_peak_2048x2048_float32` (CPU only): NumPy's float32 matmul rate, the peak the training's
   GFLOP/s are a share of (on a GPU the datasheet peak is used, `src/jax_benchmarks/mnist/throughput.py`);
3. `train_step_{batch}x28x28_float32`: one optimizer step on one batch, measured (jax.jit's compile apart);
4. per epoch: `train_epoch_{batch}x28x28_float32` (timed once; `epoch` in params), then
   `validation_{test batch}x28x28_float32` on every test image (process 0 of a job only).

Names come from the settings alone (building a suite reads no data); the data set's sizes are in params.
`before` hands the run's log and progress to the suite's `Training`; `after` ends tracking and, once every
epoch is trained, saves the checkpoint and the plot. What a case needs from an earlier one (the data, the
trainer, the peak, the step's median) comes from that `Training` object, which builds each once, on first
use: `-k train_step` alone still loads the data (untimed) and builds the trainer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Generic

import click
import numpy as np

from jax_benchmarks.errors import DataError
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed, matches, select
from jax_benchmarks.measure.memory import memory_text
from jax_benchmarks.measure.progress import NoProgress, Progress
from jax_benchmarks.run import Run
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.tracking import Tracker, start_tracking
from jax_benchmarks.mnist.checkpoints import checkpoint_path, metadata_path, save_atomically, write_atomically
from jax_benchmarks.mnist.cluster import process_params
from jax_benchmarks.mnist.data.arrays import MnistData
from jax_benchmarks.mnist.settings import CHECKPOINTS_DIR, DataSettings, MnistSettings
from jax_benchmarks.mnist.throughput import PEAK_SIZE, gpu_peak, peak_matmul_flops, share_text, throughput
from jax_benchmarks.mnist.trainer import EpochOutput, EpochResult, EvalOutput, EvalResult, Plan, Trainer, plan

Log = Callable[[str], None]
IMAGE = "28x28"


def quiet(_line: str) -> None:
    """The log until the run hands over its own."""


class TrainingDiverged(click.ClickException):
    """The loss became NaN or infinite: exit 1; nothing is saved as if it were a model."""

    exit_code = 1


def read_data(settings: DataSettings, log: Log) -> MnistData:
    """The data pipeline's `load_data` (tests replace this function with synthetic data)."""
    from jax_benchmarks.mnist.data import load_data

    return load_data(settings.dataset, settings.data_source, settings.data_dir, log=log)


class CaseNames:
    """The `{op}_{shape}_{dtype}` names of a run's cases, from its settings."""

    def __init__(self, settings: DataSettings) -> None:
        self.load = f"load_{settings.dataset}_{IMAGE}_uint8"
        self.peak = f"matmul_peak_{PEAK_SIZE}x{PEAK_SIZE}_float32"
        if isinstance(settings, MnistSettings):
            self.step = f"train_step_{settings.train_batch_size}x{IMAGE}_float32"
            self.epoch = f"train_epoch_{settings.train_batch_size}x{IMAGE}_float32"
            self.validation = f"validation_{settings.test_batch_size}x{IMAGE}_float32"


def selects(patterns: tuple[str, ...], name: str, variant: str | None) -> bool:
    """Whether `--case/-k` selects a case of this name and variant (the harness's own rule)."""
    return matches(Case(name, _not_prepared, variant=variant), patterns)


def _not_prepared() -> Timed[None]:
    raise AssertionError("a case built only to test its selection is never prepared")


# ---------------------------------------------------------------------------------------------- data ---

class DataLoad:
    """The data set of a run, read once: by the load case (timed) or by the first case that needs it."""

    def __init__(self, settings: DataSettings) -> None:
        self.settings = settings
        self.log: Log = quiet
        self._data: MnistData | None = None

    def read(self) -> MnistData:
        self._data = read_data(self.settings, self.log)
        return self._data

    def data(self) -> MnistData:
        return self._data if self._data is not None else self.read()


def load_case(loads: DataLoad, variant: str | None) -> Case[MnistData]:
    settings = loads.settings

    def judge(data: MnistData, measurement: Measurement) -> Judgement:
        return Judgement(
            params={"source": data.source},
            metrics={"train_images": len(data.y_train), "test_images": len(data.y_test), "mean": data.mean,
                     "std": data.std},
            notes=[f"data: {len(data.y_train):,} train + {len(data.y_test):,} test images ready in "
                   f"{measurement.median_s:.2f} s"],
        )

    return Case(CaseNames(settings).load, lambda: Timed(loads.read, once=True), judge, variant=variant,
                dtype="uint8", params={"dataset": settings.dataset, **process_params(settings)})


def data_suite(settings: DataSettings, backend: str) -> Suite:
    """`mnist preprocess-images`: the load case, then what training will see."""
    loads = DataLoad(settings)

    def before(run: Run) -> None:
        loads.log = run.log

    def after(run: Run) -> None:
        data = loads.data()
        counts = np.bincount(np.asarray(data.y_train), minlength=10)
        run.log(
            f"source: {data.source}\n"
            f"train: {data.images_train.shape} · test: {data.images_test.shape} uint8 images, "
            f"normalized on reading to float32 [N, 28, 28, 1]\n"
            f"normalization (training set): mean {data.mean:.4f} · std {data.std:.4f}\n"
            f"train images per class: {' '.join(str(int(c)) for c in counts)}"
        )

    return Suite(Target(backend, settings.device_kind), [load_case(loads, None)], before=before, after=after)


# ------------------------------------------------------------------------------------------ training ---

BuildTrainer = Callable[[MnistData, Log], Trainer[EpochOutput, EvalOutput]]


class Training(Generic[EpochOutput, EvalOutput]):
    """One backend's training run as its cases share it; every part is built once, on first use."""

    def __init__(self, settings: MnistSettings, backend: str, build: BuildTrainer[EpochOutput, EvalOutput]) -> None:
        self.settings = settings
        self.backend = backend
        self.build = build
        self.loads = DataLoad(settings)
        self.log: Log = quiet
        self.progress: Progress = NoProgress()
        self.tracker = Tracker()  # does nothing until training starts tracking
        self._trainer: Trainer[EpochOutput, EvalOutput] | None = None
        self._plan: Plan | None = None
        self.warm = False  # the step and what the epochs use are compiled
        self.peak_gflops: float | None = None  # from the peak case (CPU) or the datasheet (GPU)
        self.step_median_s: float | None = None  # from the step case
        self.epochs: list[tuple[EpochResult, float]] = []  # each trained epoch and its seconds
        self.epoch_line = ""  # the last epoch's log line, completed by its validation
        self.validation: EvalResult | None = None  # the latest

    def begin(self, run: Run) -> None:
        self.log = self.loads.log = run.log
        self.progress = run.progress

    def end_tracking(self) -> Path | None:
        """Close the experiment (once: later calls find the silent tracker); its offline archive, if any."""
        tracker, self.tracker = self.tracker, Tracker()
        return tracker.end()

    def plan(self) -> Plan:
        if self._plan is None:
            data = self.loads.data()
            self._plan = plan(self.settings, len(data.y_train), len(data.y_test))
        return self._plan

    def data_params(self) -> dict[str, Scalar]:
        """The params the data decides, recorded with every training case."""
        data, shape = self.loads.data(), self.plan()
        return {"source": data.source, "train_images": len(data.y_train), "test_images": len(data.y_test),
                "batch": shape.batch, "steps_per_epoch": shape.steps}

    def trainer(self) -> Trainer[EpochOutput, EvalOutput]:
        if self._trainer is None:
            self.plan()  # refuses a batch larger than the data set before a model is built
            self._trainer = self.build(self.loads.data(), self.log)
            summary = self._trainer.summary()
            if self.settings.mode == "train":
                # One process of a job tracks for all of them (its figures are the job's: global loss).
                self.tracker = start_tracking(self.settings.comet if self.settings.lead else "off",
                                              name=f"mnist-{self.backend}", log=self.log)
                self.tracker.log_parameters({**training_params(self.settings), **self.data_params()})
                self.tracker.log_text(summary)
            self.log(summary)
        return self._trainer

    def warmed_trainer(self) -> Trainer[EpochOutput, EvalOutput]:
        trainer = self.trainer()
        if not self.warm:
            trainer.warm_up()
            self.warm = True
        return trainer


def training_params(settings: MnistSettings) -> dict[str, Scalar]:
    return {
        "dataset": settings.dataset, "epochs": settings.num_epochs, "optimizer": settings.optimizer,
        "learning_rate": settings.lr, "schedule": settings.lr_schedule, "momentum": settings.momentum,
        "seed": settings.seed, "dry_run": settings.dry_run, "devices": settings.device_count,
        **process_params(settings),
    }


def peak_case(training: Training[EpochOutput, EvalOutput], variant: str | None) -> Case[np.ndarray]:
    def prepare() -> Timed[np.ndarray]:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
        b = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
        return Timed(lambda: a @ b)

    def judge(_product: np.ndarray, measurement: Measurement) -> Judgement:
        training.peak_gflops = peak_matmul_flops() / measurement.median_s / 1e9
        return Judgement(metrics={"gflops": training.peak_gflops}, notes=[
            f"float32 matmul peak of this machine: {training.peak_gflops:.1f} GFLOP/s (NumPy {PEAK_SIZE}², all cores)"])

    return Case(CaseNames(training.settings).peak, prepare, judge, variant=variant, dtype="float32",
                params={"library": "numpy", **process_params(training.settings)})


def step_case(training: Training[EpochOutput, EvalOutput], variant: str | None, compiled: bool) -> Case[object]:
    def prepare() -> Timed[object]:
        trainer = training.trainer()
        call = trainer.prepare_step()
        training.warm = True  # the step's first timed call compiles it (recorded as compile_s)
        return Timed(call, trainer.sync, fixed_count=trainer.fixed_count)

    def judge(_result: object, measurement: Measurement) -> Judgement:
        training.trainer().end_step()
        training.step_median_s = measurement.median_s
        batch = training.plan().batch
        figures = throughput(batch, measurement.median_s, training.peak_gflops)
        first = "compile" if compiled else "first call"
        return Judgement(metrics=figures, params=training.data_params(), notes=[
            f"train step (batch {batch}): {measurement.median_s * 1e3:.1f} ms median, "
            f"{first} {measurement.compile_s or 0.0:.2f} s above it · {figures['images_per_s']:.0f} images/s"])

    return Case(CaseNames(training.settings).step, prepare, judge, variant=variant, dtype="float32",
                params=training_params(training.settings), compiled=compiled)


def epoch_case(training: Training[EpochOutput, EvalOutput], variant: str | None, epoch: int,
               validated: bool) -> Case[EpochOutput]:
    settings = training.settings

    def prepare() -> Timed[EpochOutput]:
        trainer = training.warmed_trainer()
        steps, progress = training.plan().steps, training.progress

        def train() -> EpochOutput:
            progress.start(f"epoch {epoch}/{settings.num_epochs}", steps)
            try:
                return trainer.train_epoch(steps, progress.advance)
            finally:
                progress.stop()

        return Timed(train, trainer.sync, once=True)

    def judge(output: EpochOutput, measurement: Measurement) -> Judgement:
        result, seconds, steps = training.trainer().read_epoch(output), measurement.median_s, training.plan().steps
        if not math.isfinite(result.loss):
            training.end_tracking()
            raise TrainingDiverged(
                f"training diverged: the loss of epoch {epoch} is {result.loss} ({settings.optimizer}, learning "
                f"rate {settings.lr:g}, momentum {settings.momentum:g}); no checkpoint was saved and the epoch "
                "was not recorded; try a smaller --learning-rate"
            )
        training.epochs.append((result, seconds))
        figures = throughput(result.images, seconds, training.peak_gflops)
        metrics: dict[str, Scalar] = {**figures, "loss": result.loss, "accuracy": result.accuracy}
        overhead = ""
        if training.step_median_s is not None:  # the step case ran
            metrics["loop_overhead"] = seconds / (training.step_median_s * steps) - 1.0
            overhead = f" · loop overhead {metrics['loop_overhead']:+.1%}"
        for i, loss in enumerate(result.step_losses):
            training.tracker.log_metrics({"train_step_loss": loss}, step=(epoch - 1) * steps + i + 1, epoch=epoch)
        training.tracker.log_metrics({"train_loss": result.loss, "train_accuracy": result.accuracy,
                                      "images_per_s": figures["images_per_s"]}, step=epoch * steps, epoch=epoch)
        training.epoch_line = (
            f"epoch {epoch}/{settings.num_epochs}: {seconds:.2f} s · {figures['images_per_s']:.0f} images/s · "
            f"{figures['gflops']:.1f} GFLOP/s{share_text(figures)}{overhead} · "
            f"train loss {result.loss:.4f} acc {result.accuracy:.2%}"
            + (f" · {peak}" if (peak := memory_text(measurement.memory)) else "")
        )
        # With validation, its case logs the epoch's line completed by the test figures.
        return Judgement(metrics=metrics, params=training.data_params(),
                         notes=[] if validated else [training.epoch_line])

    return Case(CaseNames(settings).epoch, prepare, judge, variant=variant, dtype="float32",
                params={**training_params(settings), "epoch": epoch})


def eval_metrics(val: EvalResult, measurement: Measurement) -> dict[str, Scalar]:
    return {"loss": val.loss, "accuracy": val.accuracy, "images": val.images,
            "images_per_s": val.images / measurement.median_s}


def evaluating(training: Training[EpochOutput, EvalOutput]) -> Timed[EvalOutput]:
    """Test the model on every test image (a dry run: a few batches)."""
    trainer, limit = training.trainer(), training.plan().eval_limit
    return Timed(lambda: trainer.evaluate(limit), trainer.sync, once=True)


def validation_case(training: Training[EpochOutput, EvalOutput], variant: str | None, epoch: int) -> Case[EvalOutput]:
    """The model after training epoch `epoch`, on the test images."""

    def judge(output: EvalOutput, measurement: Measurement) -> Judgement:
        val = training.validation = training.trainer().read_eval(output)
        training.tracker.log_metrics({"val_loss": val.loss, "val_accuracy": val.accuracy},
                                     step=epoch * training.plan().steps, epoch=epoch)
        return Judgement(metrics=eval_metrics(val, measurement), params=training.data_params(), notes=[
            f"{training.epoch_line} · test loss {val.loss:.4f} acc {val.accuracy:.2%}"])

    return Case(CaseNames(training.settings).validation, lambda: evaluating(training), judge, variant=variant,
                dtype="float32", params={**training_params(training.settings), "epoch": epoch})


def training_suite(settings: MnistSettings, backend: str, variant: str | None,
                   build: BuildTrainer[EpochOutput, EvalOutput], *, compiled: bool,
                   finish: Callable[[], None] | None = None) -> Suite:
    """`mnist flax|pytorch`: load, peak (CPU), step, then each epoch and its validation; `finish` (e.g. end the
    worker processes) runs last, after the checkpoint is saved."""
    training = Training(settings, backend, build)
    names = CaseNames(settings)
    patterns = settings.case_patterns
    validating = settings.lead and selects(patterns, names.validation, variant)
    if validating and not selects(patterns, names.epoch, variant):
        raise click.BadParameter(
            f"{settings.case}: {names.validation} validates the model after each epoch; select "
            f"{names.epoch} too (e.g. -k train_epoch,validation)", param_hint="'--case'")
    cases: list[Case[Any]] = [load_case(training.loads, variant)]
    if settings.device_kind == "cpu":
        cases.append(peak_case(training, variant))
    cases.append(step_case(training, variant, compiled))
    for epoch in range(1, settings.num_epochs + 1):
        cases.append(epoch_case(training, variant, epoch, validating))
        if settings.lead:  # a job's other processes validate nothing: process 0's figures are the job's
            cases.append(validation_case(training, variant, epoch))

    def before(run: Run) -> None:
        training.begin(run)
        if settings.device_kind == "gpu":
            training.peak_gflops, line = gpu_peak(settings.precision)
            run.log(line)

    @contextmanager
    def tracking_ended_on_failure() -> Iterator[None]:
        # A run that stops early (Ctrl-C, out of memory, a failed check) still closes its experiment, so an
        # offline comet.ml archive is complete.
        try:
            yield
        except BaseException:
            training.end_tracking()
            raise

    def after(run: Run) -> None:
        archive = training.end_tracking()
        if archive is not None:
            run.log(f"comet.ml offline archive: {archive}")
        try:
            save_outputs(training, run)
        finally:
            if finish is not None:
                finish()

    return Suite(Target(backend, settings.device_kind), cases, before=before, after=after,
                 context=tracking_ended_on_failure)


def save_outputs(training: Training[EpochOutput, EvalOutput], run: Run) -> None:
    """The checkpoint and its metadata, the prediction plot and the run's last line, once every epoch trained."""
    from jax_benchmarks.mnist.plots import prediction_grid

    settings, trained = training.settings, len(training.epochs)
    if trained < settings.num_epochs:
        run.log(f"no checkpoint saved: {trained} of {settings.num_epochs} epochs trained (--case {settings.case})")
        return
    trainer, data = training.trainer(), training.loads.data()
    path = checkpoint_path(training.backend, settings.dataset)
    if settings.multi_process:
        # Every process of a job writes its part of one JAX checkpoint of global arrays, jointly, to one path
        # (orbax's own temporary folder and rename keep it atomic); a unique name per process would split it.
        saved = trainer.save(path)
    else:
        saved = save_atomically(trainer, path)
    if not settings.lead:
        return
    val = training.validation
    meta = {
        "backend": training.backend, "dataset": settings.dataset, "source": data.source, "mean": data.mean,
        "std": data.std, "run_id": run.run_id, "epochs": settings.num_epochs, "dry_run": settings.dry_run,
        **({"test_accuracy": val.accuracy} if val is not None else {}),
    }
    write_atomically(metadata_path(path), json.dumps(meta, indent=2).encode())
    run.log(f"checkpoint: {saved}")
    seconds = training.epochs[-1][1]
    speed = f"{training.plan().images_per_epoch / seconds:.0f} images/s · epoch {seconds:.2f} s"
    epoch_memory = next((r.memory for r in reversed(run.records) if r.case == CaseNames(settings).epoch), {})
    speed += f" · {peak}" if (peak := memory_text(epoch_memory)) else ""
    if val is None:
        run.log(f"[bold]{training.backend}: {speed} (no validation selected)[/]")
        return
    n = min(25, val.images)
    plot = prediction_grid(
        data.x_test[:n], data.y_test[:n], val.predictions[:n],
        title=f"{training.backend} · {settings.dataset} · test accuracy {val.accuracy:.2%}",
        name=f"mnist_{training.backend}_{settings.dataset}_predictions",
    )
    run.log(f"plot: {plot}")
    run.log(f"[bold]{training.backend}: test accuracy {val.accuracy:.2%} on {val.images} images · {speed}[/]")


# -------------------------------------------------------------------------------------- evaluation ---

def evaluation_suite(settings: MnistSettings, backend: str, build: BuildTrainer[EpochOutput, EvalOutput]) -> Suite:
    """`mnist evaluate <backend>`: load the data, reload the saved parameters, test them."""
    training = Training(settings, backend, build)
    path = checkpoint_path(backend, settings.dataset)
    meta: dict[str, object] = {}

    def before(run: Run) -> None:
        training.begin(run)
        if not metadata_path(path).exists():
            raise DataError(
                f"no {backend} checkpoint for {settings.dataset} under {CHECKPOINTS_DIR}/: "
                f"train one first with `mnist {backend} --dataset {settings.dataset}`"
            )

    def reload() -> None:
        trainer = training.trainer()
        try:
            meta.update(json.loads(metadata_path(path).read_text()))
            trainer.load(path)
        except Exception as exc:  # anything a damaged or foreign checkpoint raises (orbax, torch, json, OSError)
            reason = (str(exc).strip().splitlines() or [""])[0][:200]
            raise DataError(
                f"the {backend} checkpoint {path} is corrupt or does not fit this model "
                f"({type(exc).__name__}: {reason}); train a new one with `mnist {backend} --dataset {settings.dataset}`"
            ) from None

    def prepare() -> Timed[EvalOutput]:
        reload()
        return evaluating(training)

    def judge(output: EvalOutput, measurement: Measurement) -> Judgement:
        val = training.validation = training.trainer().read_eval(output)
        trained_on = meta.get("source")
        return Judgement(metrics=eval_metrics(val, measurement),
                         params={"trained_on": trained_on if isinstance(trained_on, str) else None})

    def after(run: Run) -> None:
        val, at_save = training.validation, meta.get("test_accuracy")
        if val is None:  # -k selected the load case only
            return
        then = f"{at_save:.2%}" if isinstance(at_save, float) else "not recorded"
        run.log(f"[bold]{backend}: checkpoint {path} · test accuracy {val.accuracy:.2%} on {val.images} images "
                f"({training.loads.data().source}); at save time it was {then}[/]")

    cases: list[Case[Any]] = [
        load_case(training.loads, "checkpoint"),
        Case(CaseNames(settings).validation, prepare, judge, variant="checkpoint", dtype="float32",
             params={"checkpoint": str(path)}),
    ]
    return Suite(Target(backend, settings.device_kind), cases, before=before, after=after)
