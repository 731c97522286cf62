"""The suites of `mnist flax|pytorch|all`, `mnist evaluate` and `mnist preprocess-images`, built from the training
cases (`jax_benchmarks.training.cases`: the load and peak cases, then the trainer's step, epochs and validations).

What mnist adds around them: the comet.ml experiment (a fixture that subscribes to the records as they are written,
and is ended however the suite ends), the checkpoint and the prediction plot saved once every epoch trained (unless
--no-save), the evaluation of a saved checkpoint, and what `mnist preprocess-images` shows of the data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from jax_benchmarks.errors import DataError
from jax_benchmarks.measure.harness import RECORDS, Case, Fixture, Judgement, Recorder, Suite, SuiteRecords, Target
from jax_benchmarks.measure.memory import memory_text
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.mnist.checkpoints import (checkpoint_path, metadata_path, save_atomically, unique_job_sibling,
                                              write_atomically)
from jax_benchmarks.mnist.settings import CHECKPOINTS_DIR, MnistSettings
from jax_benchmarks.store.record import Record
from jax_benchmarks.tracking import Tracker, start_tracking
from jax_benchmarks.training.cases import (AnyTrainer, BuildTrainer, CaseNames, SuiteData, TrainedEpoch,
                                           data_fixture, data_params, eval_metrics, evaluating, load_case,
                                           process_params, suite_data, tested_text, trainer_fixture, training_cases)
from jax_benchmarks.training.data.arrays import MnistData
from jax_benchmarks.training.settings import DataSettings, EvaluateSettings
from jax_benchmarks.training.trainer import EvalResult


def data_suite(settings: DataSettings, backend: str) -> Suite:
    """`mnist preprocess-images`: the load case, then what training will see."""
    data = data_fixture(settings)

    def after(run: Recorder, loaded: MnistData) -> None:
        counts = np.bincount(np.asarray(loaded.y_train), minlength=10)
        run.log(
            f"source: {loaded.source}\n"
            f"train: {loaded.images_train.shape} · test: {loaded.images_test.shape} uint8 images, "
            f"normalized on reading to float32 [N, 28, 28, 1]\n"
            f"normalization (training set): mean {loaded.mean:.4f} · std {loaded.std:.4f}\n"
            f"train images per class: {' '.join(str(int(c)) for c in counts)}"
        )

    load = load_case(CaseNames(settings).load, {"dataset": settings.dataset, **process_params(settings)}, data, None)
    return Suite(Target(backend, settings.device_kind), [load], after=after, fixtures=[data], after_uses=(data,))


class Experiment:
    """The run's comet.ml experiment, following a training suite's epoch and validation records as they are
    written; `end` closes it once and logs its offline archive, if any."""

    def __init__(self, records: SuiteRecords, names: CaseNames, variant: str | None) -> None:
        self.tracker, self.records, self.names, self.variant = Tracker(), records, names, variant
        records.subscribe(self.follow)

    def follow(self, record: Record, output: object) -> None:
        epoch, steps = record.params.get("epoch"), record.params.get("steps_per_epoch")
        if record.variant != self.variant or not isinstance(epoch, int) or not isinstance(steps, int):
            return
        figures = {k: float(v) for k, v in record.metrics.items() if isinstance(v, (int, float))}
        if record.case == self.names.epoch and isinstance(output, TrainedEpoch):
            for i, loss in enumerate(output.result.step_losses):
                self.tracker.log_metrics({"train_step_loss": loss}, step=(epoch - 1) * steps + i + 1, epoch=epoch)
            self.tracker.log_metrics({"train_loss": output.result.loss, "train_accuracy": output.result.accuracy,
                                      "images_per_s": figures["images_per_s"]}, step=epoch * steps, epoch=epoch)
        elif record.case == self.names.validation:
            self.tracker.log_metrics({"val_loss": figures["loss"], "val_accuracy": figures["accuracy"]},
                                     step=epoch * steps, epoch=epoch)

    def end(self) -> None:
        self.records.unsubscribe(self.follow)
        tracker, self.tracker = self.tracker, Tracker()
        archive = tracker.end()
        if archive is not None:
            self.records.log(f"comet.ml offline archive: {archive}")


def experiment_fixture(settings: MnistSettings, backend: str, variant: str | None, shared: SuiteData,
                       trainer: Fixture[AnyTrainer]) -> Fixture[Experiment]:
    """The experiment, started before the first case that trains; ended however the suite ends (Ctrl-C, out of
    memory, a failed check), so an offline archive is complete. It follows the records of the suite's cases
    (`shared.names`)."""

    def start(loaded: MnistData, t: AnyTrainer, records: SuiteRecords) -> Experiment:
        parameters = {**shared.params, **data_params(loaded, t.plan)}
        experiment = Experiment(records, shared.names, variant)
        # One process of a job tracks for all of them (its figures are the job's: global loss).
        experiment.tracker = start_tracking(settings.comet if settings.lead else "off", name=f"mnist-{backend}",
                                            log=records.log)
        experiment.tracker.log_parameters(parameters)
        experiment.tracker.log_text(t.summary())
        return experiment

    return Fixture("experiment", start, needs=(shared.data, trainer, RECORDS), teardown=lambda e: e.end())


def training_suite(settings: MnistSettings, backend: str, variant: str | None, build: BuildTrainer, *,
                   compiled: bool, finish: Callable[[], None] | None = None, data: MnistData | None = None,
                   cannot_run: tuple[type[Exception], ...] = ()) -> Suite:
    """`mnist flax|pytorch`: the training cases; `after` saves the checkpoint and the plot once every epoch is
    trained (unless --no-save), then `finish` (e.g. end the worker processes). `data`: the data set another process
    read."""
    shared = suite_data(settings, variant, given=data)
    trainer = trainer_fixture(build, shared.data, check=lambda loaded: settings.check_batch_fits(len(loaded.y_train)))
    experiment = experiment_fixture(settings, backend, variant, shared, trainer)
    trained, own = training_cases(settings, trainer, variant, shared=shared, compiled=compiled, tracked=experiment,
                                  cannot_run=cannot_run)

    def after(run: Recorder, t: AnyTrainer, loaded: MnistData, records: SuiteRecords) -> None:
        try:
            save_outputs(settings, shared.names, backend, variant, run, t, loaded, records)
        finally:
            if finish is not None:
                finish()

    return Suite(Target(backend, settings.device_kind), [*shared.cases, *trained],
                 after=after, fixtures=[shared.data, shared.peak, trainer, *own, experiment],
                 after_uses=(trainer, shared.data, RECORDS))


def save_outputs(settings: MnistSettings, names: CaseNames, backend: str, variant: str | None, run: Recorder,
                 trainer: AnyTrainer, data: MnistData, records: SuiteRecords) -> None:
    """Once every epoch trained (the suite's records of its cases `names`): the checkpoint and its metadata and the
    prediction plot (unless --no-save), and the run's last line."""
    trained = records.count(names.epoch, variant)
    val = records.output(names.validation, variant)
    assert val is None or isinstance(val, EvalResult)
    last = records.last(names.epoch, variant, epoch=settings.num_epochs)
    if trained < settings.num_epochs:
        if settings.save:
            run.log(f"no checkpoint saved: {trained} of {settings.num_epochs} epochs trained (--case {settings.case})")
        return
    if settings.save:
        save_checkpoint(settings, backend, run, trainer, data, val)
    if not settings.lead:
        return
    seconds = last.median_s if last is not None and last.median_s is not None else math.nan
    speed = f"{trainer.plan.images_per_epoch / seconds:.0f} images/s · epoch {seconds:.2f} s"
    speed += f" · {peak}" if last is not None and (peak := memory_text(last.memory)) else ""
    if val is None:
        run.log(f"[bold]{backend}: {speed} (no validation selected)[/]")
        return
    if settings.save:
        from jax_benchmarks.mnist.plots import prediction_grid

        n = min(25, val.images)
        plot = prediction_grid(
            data.x_test[:n], data.y_test[:n], val.predictions[:n],
            title=f"{backend} · {settings.dataset} · test accuracy {val.accuracy:.2%}",
            name=f"mnist_{backend}_{settings.dataset}_predictions",
        )
        run.log(f"plot: {plot}")
    run.log(f"[bold]{backend}: test accuracy {val.accuracy:.2%} on {tested_text(val, settings.test_batch_size)} · "
            f"{speed}[/]")


def save_checkpoint(settings: MnistSettings, backend: str, run: Recorder, trainer: AnyTrainer, data: MnistData,
                    val: EvalResult | None) -> None:
    """The trained parameters under data/checkpoints/ (renamed into place), and beside them, written by the lead
    process, the metadata `mnist evaluate` reads: what the model was trained on and its test accuracy."""
    path = checkpoint_path(backend, settings.dataset)
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
    meta = {
        "backend": backend, "dataset": settings.dataset, "source": data.source, "mean": data.mean,
        "std": data.std, "run_id": run.run_id, "epochs": settings.num_epochs, "dry_run": settings.dry_run,
        **({"test_accuracy": val.accuracy} if val is not None else {}),
    }
    write_atomically(metadata_path(path), json.dumps(meta, indent=2).encode())
    run.log(f"checkpoint: {saved}")


def evaluation_suite(settings: EvaluateSettings, backend: str, build: BuildTrainer) -> Suite:
    """`mnist evaluate <backend>`: load the data, reload the saved parameters (the checkpoint fixture), test them."""
    names = CaseNames(settings)
    path = checkpoint_path(backend, settings.dataset)

    def reload(trainer: AnyTrainer) -> dict[str, object]:
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

    data = data_fixture(settings)
    trainer = trainer_fixture(build, data)
    checkpoint = Fixture("checkpoint", reload, needs=(trainer,))

    def before(run: Recorder) -> None:
        if not metadata_path(path).exists():
            raise DataError(
                f"no {backend} checkpoint for {settings.dataset} under {CHECKPOINTS_DIR}/: "
                f"train one first with `mnist {backend} --dataset {settings.dataset}`"
            )

    def judge(output: object, measurement: Measurement, tested: AnyTrainer, meta: dict[str, object],
              loaded: MnistData) -> Judgement:
        val = tested.read_eval(output)
        trained_on, at_save = meta.get("source"), meta.get("test_accuracy")
        then = f"{at_save:.2%}" if isinstance(at_save, float) else "not recorded"
        return Judgement(metrics=eval_metrics(val, measurement),
                         params={"trained_on": trained_on if isinstance(trained_on, str) else None},
                         notes=[f"[bold]{backend}: checkpoint {path} · test accuracy {val.accuracy:.2%} on "
                                f"{tested_text(val, settings.test_batch_size)} ({loaded.source}); at save time it was "
                                f"{then}[/]"])

    cases: list[Case[Any]] = [
        load_case(names.load, {"dataset": settings.dataset, **process_params(settings)}, data, "checkpoint"),
        Case(names.validation, lambda tested, *_: evaluating(tested), judge, variant="checkpoint", dtype="float32",
             params={"checkpoint": str(path)}, uses=(trainer, checkpoint, data)),
    ]
    return Suite(Target(backend, settings.device_kind), cases, before=before, fixtures=[data, trainer, checkpoint])


def mnist_suites(settings: EvaluateSettings, backend: str, variant: str | None, build: BuildTrainer, *,
                 compiled: bool, finish: Callable[[], None] | None = None, data: MnistData | None = None,
                 cannot_run: tuple[type[Exception], ...] = ()) -> Sequence[Suite]:
    """A backend's one suite: training for `mnist flax|pytorch|all`, else `mnist evaluate`'s (a trainer from
    `build`, the checkpoint loaded into it)."""
    if not isinstance(settings, MnistSettings):
        return [evaluation_suite(settings, backend, build)]
    return [training_suite(settings, backend, variant, build, compiled=compiled, finish=finish, data=data,
                           cannot_run=cannot_run)]
