"""The cases of `mnist flax|pytorch|all`, `mnist evaluate` and `mnist preprocess-images`, on the core harness.

A training suite is, in order (each a `Case`, so `--case/-k` selects any of them):

1. `load_{dataset}_28x28_uint8`: the data set through the data pipeline, timed once;
2. `matmul_peak_2048x2048_float32` (CPU only): NumPy's float32 matmul rate, the peak the training's
   GFLOP/s are a share of (on a GPU the datasheet peak is used, `src/jax_benchmarks/mnist/throughput.py`);
3. `train_step_{batch}x28x28_float32`: one optimizer step on one batch, measured (jax.jit's compile apart);
4. per epoch: `train_epoch_{batch}x28x28_float32` (timed once; `epoch` in params), then
   `validation_{test batch}x28x28_float32` on every test image (process 0 of a job only).

Names come from the settings alone (building a suite reads no data); the data set's sizes are in params.

What the cases share are the suite's fixtures (`jax_benchmarks.measure.harness.Fixture`): the data (provided
by the load case, which times reading it, or read untimed for the first case that needs it), the trainer, the
compiled step (provided by the step case, or compiled untimed before the first epoch), the float32 peak and the
experiment tracker; each lives while a case still to run (or `after`, which saves the model) uses it. A figure
a case needs from an earlier one (the peak, the step's median, the epoch's figures for its validation line, the
last validation's predictions for the plot) is read from what the harness recorded for that case
(`Recorded`, through the run `before` hands over); no judge writes anything down for another.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic

import numpy as np

from jax_benchmarks.errors import DataError, SettingsError, TrainingDiverged
from jax_benchmarks.hardware.peaks import cpu_facts, cpu_peak
from jax_benchmarks.measure.derived import cpu_rate_errors, loop_overhead, peak_share
from jax_benchmarks.measure.harness import Case, Fixture, Judgement, Suite, Target, Timed, matches
from jax_benchmarks.measure.memory import memory_text
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.mnist.checkpoints import (checkpoint_path, metadata_path, save_atomically, unique_job_sibling,
                                              write_atomically)
from jax_benchmarks.mnist.cluster import process_params
from jax_benchmarks.mnist.data.arrays import MnistData
from jax_benchmarks.mnist.settings import (
    CHECKPOINTS_DIR, DataSettings, EvaluateSettings, MnistSettings, Plan, TrainingSettings,
)
from jax_benchmarks.mnist.throughput import PEAK_SIZE, gpu_peak, peak_matmul_flops, share_text, throughput
from jax_benchmarks.mnist.trainer import (
    EpochOutput, EvalOutput, EvalResult, Trainer,
)
from jax_benchmarks.run import Run
from jax_benchmarks.store.record import Record, Scalar
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


# ------------------------------------------------------------------------------------ run and records ---

class RunHandle:
    """The run a suite's cases log on and read earlier records from: handed over by the suite's `before`
    (`attach`), before any case runs."""

    def __init__(self) -> None:
        self._run: Run | None = None

    def attach(self, run: Run) -> None:
        self._run = run

    @property
    def run(self) -> Run:
        if self._run is None:
            raise RuntimeError("the suite's before hands the run over before any case runs")
        return self._run

    def log(self, line: str) -> None:
        self.run.log(line)


@dataclass(frozen=True)
class Recorded:
    """What the harness recorded in this run for the cases of one backend and variant, newest first."""

    handle: RunHandle
    backend: str
    variant: str | None

    def _mine(self, record: Record, case: str) -> bool:
        return (record.backend, record.case, record.variant) == (self.backend, case, self.variant)

    def last(self, case: str, **params: Scalar) -> Record | None:
        for record in reversed(self.handle.run.records):
            if self._mine(record, case) and all(record.params.get(k) == v for k, v in params.items()):
                return record
        return None

    def count(self, case: str) -> int:
        return sum(self._mine(record, case) for record in self.handle.run.records)

    def output(self, case: str) -> object:
        """The judgement output kept with the newest record of `case` (None when there is none)."""
        for kept in reversed(self.handle.run.outputs):
            if self._mine(kept.record, case):
                return kept.value
        return None


# ---------------------------------------------------------------------------------------------- data ---

def data_fixture(settings: DataSettings, handle: RunHandle) -> Fixture[MnistData]:
    """The data set, read untimed when no load case provided it."""
    return Fixture("data", lambda: read_data(settings, handle.log))


def load_case(name: str, params: Mapping[str, Scalar], data: Fixture[MnistData], variant: str | None) -> Case[MnistData]:
    """The data set through the data pipeline (the data fixture's own setup), timed once; it becomes the suite's
    data fixture."""

    def judge(loaded: MnistData, measurement: Measurement) -> Judgement:
        return Judgement(
            params={"source": loaded.source},
            metrics={"train_images": len(loaded.y_train), "test_images": len(loaded.y_test), "mean": loaded.mean,
                     "std": loaded.std},
            notes=[f"data: {len(loaded.y_train):,} train + {len(loaded.y_test):,} test images ready in "
                   f"{measurement.median_s:.2f} s"],
        )

    return Case(name, lambda: Timed(data.setup, once=True), judge, variant=variant, dtype="uint8", params=params,
                provides=data)


def load_params(settings: DataSettings) -> dict[str, Scalar]:
    return {"dataset": settings.dataset, **process_params(settings)}


def data_suite(settings: DataSettings, backend: str) -> Suite:
    """`mnist preprocess-images`: the load case, then what training will see."""
    handle = RunHandle()
    data = data_fixture(settings, handle)

    def after(run: Run, loaded: MnistData) -> None:
        counts = np.bincount(np.asarray(loaded.y_train), minlength=10)
        run.log(
            f"source: {loaded.source}\n"
            f"train: {loaded.images_train.shape} · test: {loaded.images_test.shape} uint8 images, "
            f"normalized on reading to float32 [N, 28, 28, 1]\n"
            f"normalization (training set): mean {loaded.mean:.4f} · std {loaded.std:.4f}\n"
            f"train images per class: {' '.join(str(int(c)) for c in counts)}"
        )

    load = load_case(CaseNames(settings).load, load_params(settings), data, None)
    return Suite(Target(backend, settings.device_kind), [load],
                 before=handle.attach, after=after, fixtures=[data], after_uses=(data,))


# ------------------------------------------------------------------------------------------ training ---

class Experiment:
    """The run's experiment tracker; `end` closes it once (later calls find the silent tracker) and returns its
    offline archive, if any."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker

    def end(self) -> Path | None:
        tracker, self.tracker = self.tracker, Tracker()
        return tracker.end()


def training_params(settings: MnistSettings) -> dict[str, Scalar]:
    """The settings every training case records."""
    return {
        "dataset": settings.dataset, "epochs": settings.num_epochs, "optimizer": settings.optimizer,
        "learning_rate": settings.lr, "schedule": settings.lr_schedule, "momentum": settings.momentum,
        "seed": settings.seed, "dry_run": settings.dry_run, "devices": settings.device_count,
        **process_params(settings),
    }


def data_params(data: MnistData, shape: Plan) -> dict[str, Scalar]:
    """The params the data decides, recorded with every training case."""
    return {"source": data.source, "train_images": len(data.y_train), "test_images": len(data.y_test),
            "batch": shape.batch, "steps_per_epoch": shape.steps}


@dataclass(frozen=True)
class Training(Generic[EpochOutput, EvalOutput]):
    """What one backend's training suite declares: its fixtures, and the records its cases read."""

    settings: MnistSettings
    backend: str
    names: CaseNames
    params: Mapping[str, Scalar]  # the settings every training case records
    process: Mapping[str, Scalar]  # which process of a job records (none for one process)
    handle: RunHandle
    recorded: Recorded
    data: Fixture[MnistData]
    trainer: Fixture[Trainer[EpochOutput, EvalOutput]]
    compiled: Fixture[object]  # the step and what the epochs use are compiled
    peak: Fixture[float | None]
    experiment: Fixture[Experiment]

    @property
    def fixtures(self) -> list[Fixture[Any]]:
        return [self.data, self.trainer, self.compiled, self.peak, self.experiment]


def training(settings: MnistSettings, backend: str, variant: str | None,
             build: BuildTrainer[EpochOutput, EvalOutput]) -> Training[EpochOutput, EvalOutput]:
    names, handle = CaseNames(settings), RunHandle()
    recorded = Recorded(handle, backend, variant)
    params, process = training_params(settings), process_params(settings)

    def make_trainer(loaded: MnistData) -> Trainer[EpochOutput, EvalOutput]:
        if settings.SAVES_MODEL:
            settings.check_batch_fits(len(loaded.y_train))  # before a model is built
        trainer = build(loaded, handle.log)
        handle.log(trainer.summary())
        return trainer

    def peak_gflops() -> float | None:
        """The float32 peak the training's GFLOP/s are a share of: the GPU's datasheet, or on a CPU the peak
        case's record (None when -k did not select it)."""
        if settings.device_kind == "gpu":
            return gpu_peak(settings.precision)[0]
        physical, _ = cpu_peak(cpu_facts(), "float32")  # a measured rate is attainable, not a peak
        return None if physical is None else physical.gflops

    def start_experiment(loaded: MnistData, trainer: Trainer[EpochOutput, EvalOutput]) -> Experiment:
        # One process of a job tracks for all of them (its figures are the job's: global loss).
        tracker = start_tracking(settings.comet if settings.lead else "off", name=f"mnist-{backend}", log=handle.log)
        tracker.log_parameters({**params, **data_params(loaded, trainer.plan)})
        tracker.log_text(trainer.summary())
        return Experiment(tracker)

    data = data_fixture(settings, handle)
    trainer = Fixture("trainer", make_trainer, needs=(data,))
    return Training(
        settings, backend, names, params, process, handle, recorded, data, trainer,
        compiled=Fixture("compiled step", lambda t: t.warm_up(), needs=(trainer,)),
        peak=Fixture("peak", peak_gflops),
        # Ended however the suite ends (Ctrl-C, out of memory, a failed check), so an offline archive is complete.
        experiment=Fixture("experiment", start_experiment, needs=(data, trainer), teardown=lambda e: e.end()),
    )


def peak_case(name: str, process: Mapping[str, Scalar], variant: str | None) -> Case[np.ndarray]:
    def prepare() -> Timed[np.ndarray]:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
        b = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
        return Timed(lambda: a @ b)

    def judge(_product: np.ndarray, measurement: Measurement) -> Judgement:
        gflops = peak_matmul_flops() / measurement.median_s / 1e9
        return Judgement(metrics={"gflops": gflops}, notes=[
            f"attainable float32 matmul rate of this machine: {gflops:.1f} GFLOP/s (NumPy {PEAK_SIZE}², all cores)",
            cpu_peak(cpu_facts(), "float32")[1]], failures=cpu_rate_errors(gflops, "float32"))

    return Case(name, prepare, judge, variant=variant, dtype="float32", params={"library": "numpy", **process})


def step_case(t: Training[EpochOutput, EvalOutput], variant: str | None, compiled: bool) -> Case[object]:
    """One step on one batch; its first timed call compiles it, so it provides the compiled-step fixture."""

    def prepare(trainer: Trainer[EpochOutput, EvalOutput], _data: MnistData, _peak: float | None) -> Timed[object]:
        return Timed(trainer.prepare_step(), trainer.sync, fixed_count=trainer.fixed_count)

    def judge(_result: object, measurement: Measurement, trainer: Trainer[EpochOutput, EvalOutput],
              data: MnistData, peak: float | None) -> Judgement:
        batch = trainer.plan.batch
        figures = throughput(batch, measurement.median_s, peak)
        first = "compile" if compiled else "first call"
        return Judgement(metrics=figures, params=data_params(data, trainer.plan),
                         failures=peak_share(figures["gflops"], peak)[1], notes=[
            f"train step (batch {batch}): {measurement.median_s * 1e3:.1f} ms median, "
            f"{first} {measurement.compile_s or 0.0:.2f} s above it · {figures['images_per_s']:.0f} images/s"])

    return Case(t.names.step, prepare, judge, variant=variant, dtype="float32", params=t.params,
                compiled=compiled, uses=(t.trainer, t.data, t.peak), provides=t.compiled)


def epoch_line(epoch: int, epochs: int, seconds: float, metrics: Mapping[str, Scalar],
               memory: Mapping[str, Scalar]) -> str:
    """The log line of a trained epoch, from its recorded figures (time, then peak memory where measured)."""
    figures = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
    overhead = f" · loop overhead {figures['loop_overhead']:+.1%}" if "loop_overhead" in figures else ""
    return (f"epoch {epoch}/{epochs}: {seconds:.2f} s · {figures['images_per_s']:.0f} images/s · "
            f"{figures['gflops']:.1f} GFLOP/s{share_text(figures)}{overhead} · "
            f"train loss {figures['loss']:.4f} acc {figures['accuracy']:.2%}"
            + (f" · {peak}" if (peak := memory_text(memory)) else ""))


def epoch_case(t: Training[EpochOutput, EvalOutput], variant: str | None, epoch: int,
               validated: bool) -> Case[EpochOutput]:
    settings = t.settings

    def prepare(trainer: Trainer[EpochOutput, EvalOutput], *_: object) -> Timed[EpochOutput]:
        trainer.end_step()  # the step case's timed steps leave no trace in training
        steps, progress = trainer.plan.steps, t.handle.run.progress

        def train() -> EpochOutput:
            progress.start(f"epoch {epoch}/{settings.num_epochs}", steps)
            try:
                return trainer.train_epoch(steps, progress.advance)
            finally:
                progress.stop()

        return Timed(train, trainer.sync, once=True)

    def judge(output: EpochOutput, measurement: Measurement, trainer: Trainer[EpochOutput, EvalOutput],
              data: MnistData, peak: float | None, _compiled: object, experiment: Experiment) -> Judgement:
        result, seconds, steps = trainer.read_epoch(output), measurement.median_s, trainer.plan.steps
        if not math.isfinite(result.loss):
            raise TrainingDiverged(
                f"training diverged: the loss of epoch {epoch} is {result.loss} ({settings.optimizer}, learning "
                f"rate {settings.lr:g}, momentum {settings.momentum:g}); no checkpoint was saved and the epoch "
                "was not recorded; try a smaller --learning-rate"
            )
        figures = throughput(result.images, seconds, peak)
        metrics: dict[str, Scalar] = {**figures, "loss": result.loss, "accuracy": result.accuracy}
        step = t.recorded.last(t.names.step)
        explained: list[str] = []
        if step is not None and step.median_s is not None:  # the step case ran
            overhead = loop_overhead(seconds, measurement.contention, step.median_s, step.contention, steps)
            metrics.update({} if overhead.value is None else {"loop_overhead": overhead.value})
            explained = [] if overhead.why_not is None else [overhead.why_not]
        for i, loss in enumerate(result.step_losses):
            experiment.tracker.log_metrics({"train_step_loss": loss}, step=(epoch - 1) * steps + i + 1, epoch=epoch)
        experiment.tracker.log_metrics({"train_loss": result.loss, "train_accuracy": result.accuracy,
                                        "images_per_s": figures["images_per_s"]}, step=epoch * steps, epoch=epoch)
        # With validation, its case logs this line completed by the test figures.
        line = epoch_line(epoch, settings.num_epochs, seconds, metrics, measurement.memory)
        return Judgement(metrics=metrics, params=data_params(data, trainer.plan), failures=peak_share(figures["gflops"], peak)[1],
                         notes=[*explained, *([] if validated else [line])])

    return Case(t.names.epoch, prepare, judge, variant=variant, dtype="float32",
                params={**t.params, "epoch": epoch}, uses=(t.trainer, t.data, t.peak, t.compiled, t.experiment))


def eval_metrics(val: EvalResult, measurement: Measurement) -> dict[str, Scalar]:
    return {"loss": val.loss, "accuracy": val.accuracy, "images": val.images,
            "images_per_s": val.images / measurement.median_s}


def evaluating(trainer: Trainer[EpochOutput, EvalOutput]) -> Timed[EvalOutput]:
    """Test the model on every test image (a dry run: a few batches)."""
    limit = trainer.plan.eval_limit
    return Timed(lambda: trainer.evaluate(limit), trainer.sync, once=True)


def validation_case(t: Training[EpochOutput, EvalOutput], variant: str | None, epoch: int) -> Case[EvalOutput]:
    """The model after training epoch `epoch`, on the test images; the predictions are kept for the plot."""

    def judge(output: EvalOutput, measurement: Measurement, trainer: Trainer[EpochOutput, EvalOutput],
              data: MnistData, experiment: Experiment) -> Judgement:
        val = trainer.read_eval(output)
        experiment.tracker.log_metrics({"val_loss": val.loss, "val_accuracy": val.accuracy},
                                       step=epoch * trainer.plan.steps, epoch=epoch)
        trained = t.recorded.last(t.names.epoch, epoch=epoch)
        line = (epoch_line(epoch, t.settings.num_epochs, trained.median_s, trained.metrics, trained.memory) + " · "
                if trained is not None and trained.median_s is not None else f"epoch {epoch}: ")
        return Judgement(metrics=eval_metrics(val, measurement), params=data_params(data, trainer.plan), output=val,
                         notes=[f"{line}test loss {val.loss:.4f} acc {val.accuracy:.2%}"])

    return Case(t.names.validation, lambda trainer, *_: evaluating(trainer), judge, variant=variant,
                dtype="float32", params={**t.params, "epoch": epoch}, uses=(t.trainer, t.data, t.experiment))


def training_cases(t: Training[EpochOutput, EvalOutput], variant: str | None, compiled: bool) -> list[Case[Any]]:
    """Load, peak (CPU), step, then each epoch and its validation; refuses a validation selected without
    the epochs it validates."""
    settings, names = t.settings, t.names
    validating = settings.lead and matches(validation_case(t, variant, 1), settings.case_patterns)
    if validating and not matches(epoch_case(t, variant, 1, True), settings.case_patterns):
        raise SettingsError("--case", f"{settings.case}: {names.validation} validates the model after each epoch; "
                                      f"select {names.epoch} too (e.g. -k train_epoch,validation)")
    cases: list[Case[Any]] = [load_case(names.load, {"dataset": settings.dataset, **t.process}, t.data, variant)]
    if settings.device_kind == "cpu":
        cases.append(peak_case(names.peak, t.process, variant))
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
    trained, then `finish` (e.g. end the worker processes)."""
    t = training(settings, backend, variant, build)

    def before(run: Run) -> None:
        t.handle.attach(run)
        if settings.device_kind == "gpu":
            run.log(gpu_peak(settings.precision)[1])

    def after(run: Run, trainer: Trainer[EpochOutput, EvalOutput], data: MnistData, experiment: Experiment) -> None:
        archive = experiment.end()
        if archive is not None:
            run.log(f"comet.ml offline archive: {archive}")
        try:
            save_outputs(t, run, trainer, data)
        finally:
            if finish is not None:
                finish()

    return Suite(Target(backend, settings.device_kind), training_cases(t, variant, compiled), before=before,
                 after=after, fixtures=t.fixtures, after_uses=(t.trainer, t.data, t.experiment))


def save_outputs(t: Training[EpochOutput, EvalOutput], run: Run, trainer: Trainer[EpochOutput, EvalOutput],
                 data: MnistData) -> None:
    """The checkpoint and its metadata, the prediction plot and the run's last line, once every epoch trained."""
    from jax_benchmarks.mnist.plots import prediction_grid

    settings, names = t.settings, t.names
    trained = t.recorded.count(names.epoch)
    if trained < settings.num_epochs:
        run.log(f"no checkpoint saved: {trained} of {settings.num_epochs} epochs trained (--case {settings.case})")
        return
    path = checkpoint_path(t.backend, settings.dataset)
    if settings.multi_process:
        # Every process of a job writes its part of one JAX checkpoint of global arrays, jointly, to one
        # folder: named after the run, which every process of the job shares and no other run has (a
        # unique name per process would split the checkpoint; the final name would collide with another
        # run saving into the same folder). The lead process then renames it into place.
        shared = unique_job_sibling(path, run.run_id)
        if not settings.lead:
            trainer.save(shared)
            return
        saved = save_atomically(trainer, path, temporary=shared)
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
    speed += f" · {peak}" if last is not None and (peak := memory_text(last.memory)) else ""
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
    handle, names = RunHandle(), CaseNames(settings)
    path = checkpoint_path(backend, settings.dataset)

    def make_trainer(loaded: MnistData) -> Trainer[EpochOutput, EvalOutput]:
        trainer = build(loaded, handle.log)
        handle.log(trainer.summary())
        return trainer

    def reload(trainer: Trainer[EpochOutput, EvalOutput]) -> dict[str, object]:
        """The checkpoint's metadata; its parameters are loaded into the trainer."""
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

    data = data_fixture(settings, handle)
    trainer = Fixture("trainer", make_trainer, needs=(data,))
    checkpoint = Fixture("checkpoint", reload, needs=(trainer,))

    def before(run: Run) -> None:
        handle.attach(run)
        if not metadata_path(path).exists():
            raise DataError(
                f"no {backend} checkpoint for {settings.dataset} under {CHECKPOINTS_DIR}/: "
                f"train one first with `mnist {backend} --dataset {settings.dataset}`"
            )

    def judge(output: EvalOutput, measurement: Measurement, tested: Trainer[EpochOutput, EvalOutput],
              meta: dict[str, object], loaded: MnistData) -> Judgement:
        val = tested.read_eval(output)
        trained_on, at_save = meta.get("source"), meta.get("test_accuracy")
        then = f"{at_save:.2%}" if isinstance(at_save, float) else "not recorded"
        return Judgement(metrics=eval_metrics(val, measurement),
                         params={"trained_on": trained_on if isinstance(trained_on, str) else None},
                         notes=[f"[bold]{backend}: checkpoint {path} · test accuracy {val.accuracy:.2%} on {val.images} "
                                f"images ({loaded.source}); at save time it was {then}[/]"])

    cases: list[Case[Any]] = [
        load_case(names.load, load_params(settings), data, "checkpoint"),
        Case(names.validation, lambda tested, *_: evaluating(tested), judge, variant="checkpoint", dtype="float32",
             params={"checkpoint": str(path)}, uses=(trainer, checkpoint, data)),
    ]
    return Suite(Target(backend, settings.device_kind), cases, before=before, fixtures=[data, trainer, checkpoint])


def mnist_suites(settings: MnistSettings, backend: str, variant: str | None,
                 build: BuildTrainer[EpochOutput, EvalOutput], *, compiled: bool,
                 finish: Callable[[], None] | None = None) -> Sequence[Suite]:
    """A backend's one suite: evaluation for `mnist evaluate` (its settings say so), else training."""
    if isinstance(settings, EvaluateSettings):
        return [evaluation_suite(settings, backend, build)]
    return [training_suite(settings, backend, variant, build, compiled=compiled, finish=finish)]
