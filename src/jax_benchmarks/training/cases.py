"""The cases of training the CNN, on the core harness: what `mnist flax|pytorch|all` and `jit flax` time (mnist's
suites around them: `jax_benchmarks.mnist.cases`).

A training suite is, in order (each a `Case`, so `--case/-k` selects any of them):

1. `load_{dataset}_28x28_uint8`: the data set through the data pipeline, timed once;
2. `matmul_peak_2048x2048_float32` (CPU only): NumPy's float32 matmul rate, what this machine attains; the
   training's GFLOP/s are a share of the physical peak (the CPU's from what the OS reports,
   `hardware/peaks.py`; on a GPU the datasheet's), never above 1;
3. `train_step_{batch}x28x28_float32`: one optimizer step on one batch, measured (jax.jit's compile apart);
   what its timed steps changed in the trainer is put back when its `timed step` fixture is torn down, right
   after it;
4. per epoch: `train_epoch_{batch}x28x28_float32` (timed once; `epoch` in params), then
   `validation_{test batch}x28x28_float32` on every test image (process 0 of a job only).

Names come from the settings alone (building a suite reads no data); the data set's sizes are in params.
Steps 1-2 are `data_cases`, once per suite (`suite_data` declares them with the suite's data, peak and case names);
steps 3-4 are `training_cases`, per trainer fixture: `jit flax` runs them for two trainers on one data fixture (the
step not jitted, then jitted), comparing the second's with the first's through a `Comparison`. Whatever looks a
record of the suite up later takes the names from `suite_data` (`SuiteData.names`); a stored name's kind is read
with `training.names.TrainedCase`, where the step, epoch and validation names are spelled.

What the cases share are the suite's fixtures (`jax_benchmarks.measure.harness.Fixture`): the data (provided
by the load case, which times reading it, or read untimed for the first case that needs it), the trainer, the
compiled step (provided by the step case, or compiled untimed before the first epoch) and the float32 peak.
A figure a case needs from an earlier one (the step's record, the epoch's figures for its validation
line, the last validation's predictions for the plot) is read from this suite's records (the harness's
`RECORDS` view); judges return data only. A fixture held from the first epoch to the last validation
(`training_cases`' `tracked`: mnist's comet.ml experiment) may subscribe to those records as they are written.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

import numpy as np

from jax_benchmarks.errors import SettingsError
from jax_benchmarks.hardware.peaks import cpu_facts, cpu_peak
from jax_benchmarks.measure.derived import cpu_rate_errors, loop_overhead, peak_share
from jax_benchmarks.measure.harness import RECORDS, Case, Fixture, Judgement, SuiteRecords, Timed, matches
from jax_benchmarks.measure.memory import memory_text
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.training.data.arrays import MnistData
from jax_benchmarks.training.names import IMAGE, TrainedCase
from jax_benchmarks.training.settings import DataSettings, EvaluateSettings, Plan, TrainingSettings
from jax_benchmarks.training.throughput import PEAK_SIZE, gpu_peak, peak_matmul_flops, share_text, throughput
from jax_benchmarks.training.trainer import EpochResult, EvalResult, Trainer

Log = Callable[[str], None]
AnyTrainer = Trainer[Any, Any]
BuildTrainer = Callable[[MnistData, Log], AnyTrainer]
T = TypeVar("T", bound=AnyTrainer)


def read_data(settings: DataSettings, log: Log) -> MnistData:
    """The data pipeline's `load_data`, the one way every command reads MNIST (tests replace this function
    with synthetic data)."""
    from jax_benchmarks.training.data import load_data

    return load_data(settings.dataset, settings.data_source, settings.data_dir, log=log)


class CaseNames:
    """The `{op}_{shape}_{dtype}` names of a run's cases, from its settings: built once per suite (`suite_data`,
    or a suite that declares only the load or a validation), and handed to whatever looks their records up."""

    def __init__(self, settings: DataSettings) -> None:
        self.load = f"load_{settings.dataset}_{IMAGE}_uint8"
        self.peak = f"matmul_peak_{PEAK_SIZE}x{PEAK_SIZE}_float32"
        # What the training computes in: float32, or bf16 (bfloat16 mixed precision): never one figure with the other.
        self.dtype = "bf16" if isinstance(settings, TrainingSettings) and settings.mixed_bf16 else "float32"
        if isinstance(settings, EvaluateSettings):
            self.validation = TrainedCase("validation", settings.test_batch_size, self.dtype).name
        if isinstance(settings, TrainingSettings):
            self.step = TrainedCase("step", settings.train_batch_size, self.dtype).name
            self.epoch = TrainedCase("epoch", settings.train_batch_size, self.dtype).name


def process_params(settings: DataSettings) -> dict[str, Scalar]:
    """The fields every training record carries: this process's index and the job's process count."""
    index, world = settings.job_place
    return {"process_index": index, "world_size": world}


# ---------------------------------------------------------------------------------------------- data ---

def data_fixture(settings: DataSettings, keep: int | None = None, given: MnistData | None = None) -> Fixture[MnistData]:
    """The data set, read untimed when no load case provided it (or `given`: read by another process); `keep`: only
    the first training images."""

    def read(records: SuiteRecords) -> MnistData:
        data = given if given is not None else read_data(settings, records.log)
        return data if keep is None else data._replace(images_train=data.images_train[:keep], y_train=data.y_train[:keep])

    return Fixture("data", read, needs=(RECORDS,))


def load_case(name: str, params: Mapping[str, Scalar], data: Fixture[MnistData], variant: str | None) -> Case[MnistData]:
    """The data set through the data pipeline (the data fixture's own setup), timed once; it becomes the suite's
    data fixture."""

    def judge(loaded: MnistData, measurement: Measurement, _records: SuiteRecords) -> Judgement:
        return Judgement(
            params={"source": loaded.source},
            metrics={"train_images": len(loaded.y_train), "test_images": len(loaded.y_test), "mean": loaded.mean,
                     "std": loaded.std},
            notes=[f"data: {len(loaded.y_train):,} train + {len(loaded.y_test):,} test images ready in "
                   f"{measurement.median_s:.2f} s"],
        )

    return Case(name, lambda records: Timed(lambda: data.setup(records), once=True), judge, variant=variant,
                dtype="uint8", params=params, uses=(RECORDS,), provides=data)




def trainer_fixture(build: Callable[[MnistData, Log], T], data: Fixture[MnistData], name: str = "trainer",
                    check: Callable[[MnistData], None] | None = None) -> Fixture[T]:
    """A trainer on the data, built untimed (after `check` accepts the data); its summary goes to the log, after
    the fixture's name where it is not the plain "trainer" (e.g. "eager: ")."""

    def make(loaded: MnistData, records: SuiteRecords) -> T:
        if check is not None:
            check(loaded)  # before a model is built
        trainer = build(loaded, records.log)
        heading = "" if name == "trainer" else f"{name.removesuffix(' trainer')}: "
        records.log(heading + trainer.summary())
        return trainer

    return Fixture(name, make, needs=(data, RECORDS))


# ------------------------------------------------------------------------------------------ training ---

def training_params(settings: TrainingSettings) -> dict[str, Scalar]:
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


def trained_params(data: MnistData, trainer: AnyTrainer) -> dict[str, Scalar]:
    """The params a training case's judge records: the data's, and how the step ran (`mode`: eager, jit,
    compile:<mode>) and in which precision (float32, tf32, bf16 and how), so that no comparison sets a compiled step
    against an eager one, or bfloat16 against float32, unawares."""
    return {**data_params(data, trainer.plan), "mode": trainer.mode, "precision": trainer.precision}


def compiler_text(counts: Mapping[str, int]) -> str:
    """' · compiled 1× · 0 graph breaks' from a trainer's compile counts; '' where it counted nothing. A step
    compiled more than once recompiled: with one batch shape, something else changed between calls."""
    if not counts:
        return ""
    text = f" · compiled {counts.get('compilations', 0)}×"
    if "graph_breaks" in counts:
        text += f" · {counts['graph_breaks']} graph break(s)"
    return text + (" (recompiled)" if counts.get("compilations", 0) > 1 else "")


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


def peak_fixture(device_kind: str, precision: str) -> Fixture[float | None]:
    """The float32 peak the training's GFLOP/s are a share of: the GPU's datasheet, or the CPU's physical peak
    (None where the OS does not report what it takes). The peak case's measured rate is attainable, not a peak."""

    def read(records: SuiteRecords) -> float | None:
        if precision == "bf16":  # the share of a float32 peak says nothing of bfloat16 products
            records.log("bf16 mixed precision: no share of a float32 peak is shown")
            return None
        if device_kind == "gpu":
            datasheet, line = gpu_peak(precision)
            records.log(line)
            return datasheet
        physical, _ = cpu_peak(cpu_facts(), "float32")
        return None if physical is None else physical.gflops

    return Fixture("peak", read, needs=(RECORDS,))


def epoch_line(epoch: int, epochs: int, seconds: float, metrics: Mapping[str, Scalar],
               memory: Mapping[str, Scalar]) -> str:
    """The log line of a trained epoch, from its recorded figures (time, then peak memory where measured)."""
    figures = {k: float(v) for k, v in metrics.items() if isinstance(v, (int, float))}
    overhead = f" · loop overhead {figures['loop_overhead']:+.1%}" if "loop_overhead" in figures else ""
    return (f"epoch {epoch}/{epochs}: {seconds:.2f} s · {figures['images_per_s']:.0f} images/s · "
            f"{figures['gflops']:.1f} GFLOP/s{share_text(figures)}{overhead} · "
            f"train loss {figures['loss']:.4f} acc {figures['accuracy']:.2%}"
            + (f" · {peak}" if (peak := memory_text(memory)) else ""))


def tested_text(val: EvalResult, batch: int) -> str:
    """'300 test images in batches of 100': the validation case's name gives the batch (`validation_100x28x28_float32`),
    a dry run tests a few batches, a full one every test image."""
    return f"{val.images} test images in batches of {batch}"


def eval_metrics(val: EvalResult, measurement: Measurement) -> dict[str, Scalar]:
    return {"loss": val.loss, "accuracy": val.accuracy, "images": val.images,
            "images_per_s": val.images / measurement.median_s}


def evaluating(trainer: AnyTrainer) -> Timed[Any]:
    """Test the model on every test image (a dry run: a few batches)."""
    limit = trainer.plan.eval_limit
    return Timed(lambda: trainer.evaluate(limit), trainer.sync, once=True)






@dataclass(frozen=True)
class SuiteData:
    """What every trainer of one training suite shares, from the settings once: the data set (read once, by the
    load case or untimed for the first case that needs it), the float32 peak the training's GFLOP/s are a share
    of, the suite's case names (whoever looks a record of the suite up, a judge or the suite's `after`, takes them
    from here), the cases that time the data and the machine once, whatever the suite trains (`data_cases`), and
    the settings every training case records (`training_params`; mnist's comet.ml experiment logs them too)."""

    data: Fixture[MnistData]
    peak: Fixture[float | None]
    names: CaseNames
    cases: tuple[Case[Any], ...]
    params: Mapping[str, Scalar]


def suite_data(settings: TrainingSettings, variant: str | None, *, keep: int | None = None,
               given: MnistData | None = None) -> SuiteData:
    """The suite's data and peak fixtures (`keep`, `given`: see `data_fixture`), its case names and its data cases
    (their column label: `variant`)."""
    names, params = CaseNames(settings), training_params(settings)
    data = data_fixture(settings, keep=keep, given=given)
    once = data_cases(names, settings.dataset, process_params(settings), data, variant,
                      on_cpu=settings.device_kind == "cpu")
    return SuiteData(data, peak_fixture(settings.device_kind, settings.precision), names, tuple(once), params)


def data_cases(names: CaseNames, dataset: str, process: Mapping[str, Scalar], data: Fixture[MnistData],
               variant: str | None, *, on_cpu: bool) -> list[Case[Any]]:
    """What a training suite times once, whatever it trains: the load case (it provides the data fixture), then on a
    CPU the float32 matmul rate this machine attains; both record this process's place in its job (`process`)."""
    cases: list[Case[Any]] = [load_case(names.load, {"dataset": dataset, **process}, data, variant)]
    if on_cpu:
        cases.append(peak_case(names.peak, process, variant))
    return cases


@dataclass(frozen=True)
class Comparison(Generic[T]):
    """How one trainer's cases compare with another variant's, trained earlier in the same suite (`jit flax`: jit
    against eager): the step and every epoch record `speedup` over that variant's, and `judge(trainer, epoch's
    figures, that variant's record of the same epoch or None where it did not run)` judges the last epoch, its
    judgement added to that epoch's own."""

    variant: str
    judge: Callable[[T, EpochResult, Record | None], Judgement]


def training_cases(settings: TrainingSettings, trainer: Fixture[T], variant: str | None, *, shared: SuiteData,
                   compiled: bool, params: Mapping[str, Scalar] | None = None, compare: Comparison[T] | None = None,
                   tracked: Fixture[Any] | None = None, cannot_run: tuple[type[Exception], ...] = ()
                   ) -> tuple[list[Case[Any]], list[Fixture[Any]]]:
    """One trainer's cases: its train step (jax.jit's compile apart when `compiled`), then each epoch and its
    validation, on the suite's `shared` data; with the fixtures they add (the timed and the compiled step).
    `params`: more params every case records; `tracked`: a fixture held from the first epoch to the last
    validation (mnist's comet.ml experiment); `cannot_run`: what the compiler raises when it fails (torch.compile),
    which skips the step and the epochs with the reason. Refuses a validation selected without the epochs it
    validates."""
    names = shared.names
    params = {**shared.params, **(params or {})}
    data, peak, records = shared.data, shared.peak, RECORDS
    followers = () if tracked is None else (tracked,)
    speedup_over = None if compare is None else compare.variant
    # The step case's own change: `prepare_step` keeps what its timed steps change, the teardown puts it back.
    # Named after the trainer: a suite of several trainers declares each one's steps.
    mine = "" if trainer.name == "trainer" else f"{trainer.name.removesuffix(' trainer')}: "
    timed_step = Fixture(f"{mine}timed step", lambda t: (t, t.prepare_step()), needs=(trainer,),
                         teardown=lambda stepped: stepped[0].end_step())
    compiled_step = Fixture(f"{mine}compiled step", lambda t: t.warm_up(), needs=(trainer,))

    def step_judge(_result: object, measurement: Measurement, _stepped: object, t: T, loaded: MnistData,
                   peak_gflops: float | None) -> Judgement:
        figures = throughput(t.plan.batch, measurement.median_s, peak_gflops)
        first = "compile" if compiled else "first call"
        counts = t.compile_counts()
        return Judgement(metrics={**figures, **counts}, params=trained_params(loaded, t),
                         failures=peak_share(figures["gflops"], peak_gflops)[1], notes=[
            f"train step (batch {t.plan.batch}, {t.mode}): {measurement.median_s * 1e3:.1f} ms median, "
            f"{first} {measurement.compile_s or 0.0:.2f} s above it · {figures['images_per_s']:.0f} images/s"
            f"{compiler_text(counts)}"])

    def epoch(n: int, validated: bool) -> Case[Any]:
        def judge(output: object, measurement: Measurement, t: T, loaded: MnistData, peak_gflops: float | None,
                  _compiled: object, suite: SuiteRecords, *_followers: object) -> Judgement:
            result, seconds = t.read_epoch(output), measurement.median_s
            if not math.isfinite(result.loss):
                return diverged(result, n, settings, trained_params(loaded, t))
            figures = throughput(result.images, seconds, peak_gflops)
            metrics: dict[str, Scalar] = {**figures, "loss": result.loss, "accuracy": result.accuracy,
                                          **t.compile_counts()}
            checks: dict[str, Scalar] = {"loss_finite": True}
            explained: list[str] = []
            step = suite.last(names.step, variant)
            if step is not None and step.median_s is not None:  # the step case ran
                overhead = loop_overhead(seconds, measurement.contention, step.median_s, step.contention,
                                         t.plan.steps)
                metrics.update({} if overhead.value is None else {"loop_overhead": overhead.value})
                # The one step figure taken busy is the same reason for every epoch: said with the first only.
                once = overhead.busy == "the step" and suite.count(names.epoch, variant) > 0
                explained = [] if overhead.why_not is None or once else [overhead.why_not]
            # With validation, its case logs this line completed by the test figures.
            line = epoch_line(n, settings.num_epochs, seconds, metrics, measurement.memory)
            own = Judgement(checks=checks, metrics=metrics, params=trained_params(loaded, t),
                            output=TrainedEpoch(result, line), failures=peak_share(figures["gflops"], peak_gflops)[1],
                            notes=[*explained, *([] if validated else [line])])
            if compare is None or n != settings.num_epochs:
                return own
            return joined(own, compare.judge(t, result, suite.last(names.epoch, compare.variant, epoch=n)))

        return Case(names.epoch, lambda t, *_: Timed(lambda: t.train_epoch(t.plan.steps, no_step), t.sync, once=True),
                    judge, variant=variant, dtype=names.dtype, params={**params, "epoch": n}, speedup_over=speedup_over,
                    uses=(trainer, data, peak, compiled_step, records, *followers), cannot_run=cannot_run)

    def validation(n: int) -> Case[Any]:
        def judge(output: object, measurement: Measurement, t: T, loaded: MnistData, suite: SuiteRecords,
                  *_followers: object) -> Judgement:
            val = t.read_eval(output)
            trained = suite.output(names.epoch, variant)  # epoch n's: a validation follows its epoch
            line = f"{trained.line} · " if isinstance(trained, TrainedEpoch) else f"epoch {n}: "
            return Judgement(metrics=eval_metrics(val, measurement), params=trained_params(loaded, t), output=val,
                             notes=[f"{line}test loss {val.loss:.4f} acc {val.accuracy:.2%}"])

        return Case(names.validation, lambda t, *_: evaluating(t), judge, variant=variant, dtype=names.dtype,
                    params={**params, "epoch": n}, uses=(trainer, data, records, *followers))

    validating = settings.lead and matches(validation(1), settings.case_patterns)
    if validating and not matches(epoch(1, True), settings.case_patterns):
        raise SettingsError("--case", f"{settings.case}: {names.validation} validates the model after each epoch; "
                                      f"select {names.epoch} too (e.g. -k train_epoch,validation)")
    cases: list[Case[Any]] = [
        Case(names.step, lambda stepped, t, *_: Timed(stepped[1], t.sync, fixed_count=t.fixed_count), step_judge,
             variant=variant, dtype=names.dtype, params=params, compiled=compiled, speedup_over=speedup_over,
             cannot_run=cannot_run,
             uses=(timed_step, trainer, data, peak), provides=compiled_step)]
    for n in range(1, settings.num_epochs + 1):
        cases.append(epoch(n, validating))
        if settings.lead:  # a job's other processes validate nothing: process 0's figures are the job's
            cases.append(validation(n))
    return cases, [timed_step, compiled_step]


def joined(own: Judgement, more: Judgement) -> Judgement:
    """A case's judgement with another judge's checks, metrics, params, failures and notes added after its own."""
    return replace(own, checks={**own.checks, **more.checks}, metrics={**own.metrics, **more.metrics},
                   params={**own.params, **more.params}, failures=[*own.failures, *more.failures],
                   notes=[*own.notes, *more.notes])


@dataclass(frozen=True)
class TrainedEpoch:
    """What an epoch's judgement keeps for later steps of the run: its figures and its log line."""

    result: EpochResult
    line: str


def no_step() -> None:
    """An epoch reports nothing per step: the harness's progress advances per case, outside the timed call."""


def diverged(result: EpochResult, epoch: int, settings: TrainingSettings, params: Mapping[str, Scalar]) -> Judgement:
    """An epoch whose loss is NaN or infinite: its check fails and ends the suite (no later epoch, validation,
    or checkpoint: nothing after it is recorded or saved as if it were a model). Its figures are left out."""
    return Judgement(checks={"loss_finite": False}, params=params, ends_suite=True, failures=[
        f"training diverged: the loss of epoch {epoch} is {result.loss} ({settings.optimizer}, learning rate "
        f"{settings.lr:g}, momentum {settings.momentum:g}); no checkpoint was saved; try a smaller --learning-rate"])
