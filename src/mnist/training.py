"""The training driver both backends share, so they are timed and reported alike.

A backend provides a `Trainer` (model, optimizer, compiled step, data on its
device); this module runs the epochs, times them through `src.core.timing`,
writes the records, logs, tracks, plots and checkpoints. It imports no
framework.
"""

from __future__ import annotations

import errno
import json
import math
import os
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import click
import numpy as np

from src.core.devices import gpu_name
from src.core.errors import DataError
from src.core.peaks import datasheet_peak
from src.core.results import Run, Scalar
from src.core.timing import Measurement, Sync, measure, single, time_call
from src.core.tracking import Tracker, start_tracking
from src.mnist.cluster import process_params
from src.mnist.model_spec import train_flops
from src.mnist.progress import current_progress
from src.mnist.settings import CHECKPOINTS_DIR, DataSettings, MnistSettings

DRY_RUN_BATCHES = 3
PEAK_SIZE = 2048
LOOP_OVERHEAD_GOAL = 0.05

# One float32 matmul peak per run (a run may train several backends).
_PEAK_GFLOPS: dict[str, float] = {}


@dataclass(frozen=True)
class EpochResult:
    loss: float  # mean training loss over the epoch's steps
    accuracy: float
    images: int
    step_losses: tuple[float, ...]


@dataclass(frozen=True)
class EvalResult:
    loss: float
    accuracy: float
    images: int
    predictions: np.ndarray  # predicted label of every evaluated image, in order


class Trainer(Protocol):
    backend: str
    device: str
    sync: Sync
    compiles: bool  # the step is traced and compiled on its first call (jax.jit)

    def summary(self) -> str: ...
    def parameter_count(self) -> int: ...
    def measure_step(self, repeats: int) -> Measurement: ...
    def train_epoch(self, steps: int, on_step: Callable[[], None]) -> Any: ...
    def read_epoch(self, output: Any) -> EpochResult: ...
    def evaluate(self, limit: int) -> Any: ...
    def read_eval(self, output: Any) -> EvalResult: ...
    def save(self, path: Path) -> Path: ...
    def load(self, path: Path) -> None: ...


@dataclass(frozen=True)
class Plan:
    """How many steps of which size: the last partial training batch is dropped
    (every image is still seen across the shuffled epochs); validation covers
    every test image."""

    batch: int
    steps: int
    eval_limit: int

    @property
    def images_per_epoch(self) -> int:
        return self.batch * self.steps


def plan(settings: MnistSettings, n_train: int, n_test: int) -> Plan:
    batch = min(settings.train_batch_size, n_train)
    steps = n_train // batch
    eval_limit = n_test
    if settings.dry_run:
        steps = min(steps, DRY_RUN_BATCHES)
        eval_limit = min(n_test, DRY_RUN_BATCHES * settings.test_batch_size)
    return Plan(batch, steps, eval_limit)


def checkpoint_path(backend: str, dataset: str, root: Path = CHECKPOINTS_DIR) -> Path:
    """Where a backend's trained parameters live (a directory for orbax, a file for torch)."""
    return (root / f"{backend}_{dataset}").absolute()


def _metadata_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


class TrainingDiverged(click.ClickException):
    """The loss became NaN or infinite: exit 1; nothing is saved as if it were a model."""

    exit_code = 1


def unique_sibling(path: Path) -> Path:
    """A fresh name next to `path` (same file system, so a rename is atomic), unique per process and call."""
    return path.with_name(f".{path.name}-tmp-{os.getpid()}-{secrets.token_hex(4)}")


def write_atomically(path: Path, data: bytes) -> None:
    tmp = unique_sibling(path)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def save_atomically(trainer: Trainer, path: Path) -> Path:
    """Save under a unique temporary name, then rename it into place: two runs in one folder never share
    a temporary (orbax's own temporary folder is named after ours), and a reader never sees half a checkpoint."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = unique_sibling(path)
    try:
        saved_tmp = trainer.save(tmp)  # a folder (orbax) or tmp.pt (torch)
        final = path.with_name(path.name + saved_tmp.name[len(tmp.name):])
        if saved_tmp.is_dir():
            _replace_folder(saved_tmp, final)
        else:
            os.replace(saved_tmp, final)
    finally:
        for leftover in path.parent.glob(tmp.name + "*"):
            shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)
    return final


def _replace_folder(new: Path, final: Path, attempts: int = 10) -> None:
    """rename() cannot replace a non-empty folder: move the old one aside (unique name), rename the new
    one in, delete the old. Another run doing the same at once only makes us try again."""
    for _ in range(attempts):
        aside = unique_sibling(final)
        try:
            os.replace(final, aside)
        except FileNotFoundError:
            pass
        try:
            os.rename(new, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
            continue  # another run put its checkpoint there in between: move that aside too
        finally:
            shutil.rmtree(aside, ignore_errors=True)
        return
    raise OSError(errno.EBUSY, f"could not rename {new} to {final}: other runs keep replacing it")


# ------------------------------------------------------------ figures ---

def matmul_peak_gflops(
    run: Run, backend: str, device: str, repeats: int, variant: str | None = None, process: dict[str, int] | None = None
) -> float:
    """The machine's float32 matmul rate (NumPy/BLAS, 2048²), measured once per run and recorded."""
    if run.run_id in _PEAK_GFLOPS:
        return _PEAK_GFLOPS[run.run_id]
    rng = np.random.default_rng(0)
    a = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
    b = rng.standard_normal((PEAK_SIZE, PEAK_SIZE), dtype=np.float32)
    m = measure(lambda: a @ b, repeats=min(repeats, 5), warmup=1, min_time_s=0.3)
    gflops = 2 * PEAK_SIZE**3 / m.median_s / 1e9
    run.record(
        backend=backend, variant=variant, case=f"matmul_peak_{PEAK_SIZE}x{PEAK_SIZE}_float32", device=device,
        dtype="float32", measurement=m, metrics={"gflops": gflops}, params={"library": "numpy", **(process or {})},
    )
    _PEAK_GFLOPS[run.run_id] = gflops
    return gflops


def peak_gflops(run: Run, settings: MnistSettings, backend: str, device: str, variant: str | None) -> float | None:
    """The float32 peak the training's GFLOP/s are a share of: on a CPU NumPy's measured matmul rate; on a GPU
    the datasheet peak for the run's --precision (src/core/peaks.py), since a CPU rate says nothing of a GPU;
    None for a GPU not in that table (no share is shown then)."""
    if device == "gpu":
        peak = datasheet_peak(gpu_name(), "float32", settings.precision)
        if peak is None:
            run.log(f"no datasheet peak for {gpu_name()}: the share of peak is not shown")
            return None
        run.log(f"float32 peak of this GPU: {peak.gflops:,.0f} GFLOP/s ({peak.source})")
        return peak.gflops
    gflops = matmul_peak_gflops(run, backend, device, settings.repeats, variant, process_params(settings))
    run.log(f"float32 matmul peak of this machine: {gflops:.1f} GFLOP/s (NumPy {PEAK_SIZE}², all cores)")
    return gflops


def throughput(images: int, seconds: float, peak_gflops: float | None) -> dict[str, float]:
    images_per_s = images / seconds
    gflops = train_flops() * images_per_s / 1e9
    figures = {"images_per_s": images_per_s, "gflops": gflops}
    if peak_gflops is not None:
        figures["peak_share"] = gflops / peak_gflops
    return figures


def share_text(figures: dict[str, float]) -> str:
    return f" ({figures['peak_share']:.0%} of peak)" if "peak_share" in figures else ""


# ------------------------------------------------------------ driver ---

def train_and_report(trainer: Trainer, settings: MnistSettings, run: Run, data: Any, variant: str | None = None) -> None:
    """Train for settings.num_epochs, record every figure, save checkpoint and plot."""
    backend, device = trainer.backend, trainer.device
    shape = plan(settings, len(data.y_train), len(data.y_test))
    params = _params(settings, shape, data)
    # One process of a job tracks and reports for all of them (its figures are the job's: global loss).
    tracker = start_tracking(settings.comet if settings.lead else "off", name=f"mnist-{backend}", log=run.log)
    tracker.log_parameters(params)
    summary = trainer.summary()
    run.log(summary)
    tracker.log_text(summary)
    peak = peak_gflops(run, settings, backend, device, variant)

    step = trainer.measure_step(settings.repeats)
    step_figures = throughput(shape.batch, step.median_s, peak)
    run.record(
        backend=backend, variant=variant, case="train_step", device=device, dtype="float32", params=params,
        measurement=step, compile_s=step.compile_s if trainer.compiles else None, metrics=dict(step_figures),
    )
    first = "compile" if trainer.compiles else "first call"
    run.log(
        f"train step (batch {shape.batch}): {step.median_s * 1e3:.1f} ms median, "
        f"{first} {step.compile_s or 0.0:.2f} s above it · {step_figures['images_per_s']:.0f} images/s"
    )

    progress = current_progress()
    progress.start(f"{backend} ", settings.num_epochs, shape.steps)
    epoch_s = 0.0
    val: EvalResult | None = None
    try:
        for epoch in range(1, settings.num_epochs + 1):
            output, epoch_s = time_call(lambda: trainer.train_epoch(shape.steps, progress.step), trainer.sync)
            result = trainer.read_epoch(output)
            if not math.isfinite(result.loss):
                raise TrainingDiverged(
                    f"training diverged: the loss of epoch {epoch} is {result.loss} ({settings.optimizer}, learning "
                    f"rate {settings.lr:g}, momentum {settings.momentum:g}); no checkpoint was saved and the epoch "
                    "was not recorded; try a smaller --learning-rate"
                )
            figures = throughput(result.images, epoch_s, peak)
            overhead = epoch_s / (step.median_s * shape.steps) - 1.0
            metrics: dict[str, Scalar] = {
                **figures, "loss": result.loss, "accuracy": result.accuracy, "loop_overhead": overhead,
            }
            run.record(
                backend=backend, variant=variant, case="train_epoch", device=device, dtype="float32",
                params={**params, "epoch": epoch}, measurement=single(epoch_s), metrics=metrics,
            )
            first_step = (epoch - 1) * shape.steps
            for i, loss in enumerate(result.step_losses):
                tracker.log_metrics({"train_step_loss": loss}, step=first_step + i + 1, epoch=epoch)
            val = validate(trainer, run, shape, params | {"epoch": epoch}, variant, record=settings.lead)
            tracker.log_metrics(
                {"train_loss": result.loss, "train_accuracy": result.accuracy, "images_per_s": figures["images_per_s"],
                 "val_loss": val.loss, "val_accuracy": val.accuracy},
                step=epoch * shape.steps, epoch=epoch,
            )
            progress.epoch_done()
            run.log(
                f"epoch {epoch}/{settings.num_epochs}: {epoch_s:.2f} s · {figures['images_per_s']:.0f} images/s · "
                f"{figures['gflops']:.1f} GFLOP/s{share_text(figures)} · loop overhead "
                f"{overhead:+.1%} · train loss {result.loss:.4f} acc {result.accuracy:.2%} · "
                f"test loss {val.loss:.4f} acc {val.accuracy:.2%}"
            )
    finally:
        progress.stop()
        archive = tracker.end()
        if archive is not None:
            run.log(f"comet.ml offline archive: {archive}")
    assert val is not None  # num_epochs ≥ 1
    save_outputs(trainer, settings, run, data, val, shape)
    run.log(
        f"[bold]{backend}: test accuracy {val.accuracy:.2%} on {val.images} images · "
        f"{shape.images_per_epoch / epoch_s:.0f} images/s · epoch {epoch_s:.2f} s[/]"
    )


def validate(
    trainer: Trainer, run: Run, shape: Plan, params: dict[str, Any], variant: str | None, record: bool = True
) -> EvalResult:
    """Test the model; `record=False` on a job's other processes (the same replicated model: process 0's
    record is the run's)."""
    output, seconds = time_call(lambda: trainer.evaluate(shape.eval_limit), trainer.sync)
    val = trainer.read_eval(output)
    if not record:
        return val
    run.record(
        backend=trainer.backend, variant=variant, case="validation", device=trainer.device, dtype="float32",
        params=params, measurement=single(seconds),
        metrics={"loss": val.loss, "accuracy": val.accuracy, "images": val.images, "images_per_s": val.images / seconds},
    )
    return val


def save_outputs(trainer: Trainer, settings: MnistSettings, run: Run, data: Any, val: EvalResult, shape: Plan) -> None:
    from src.mnist.plots import prediction_grid

    path = checkpoint_path(trainer.backend, settings.dataset)
    if settings.multi_process:
        # Every process of a job writes its part of one JAX checkpoint of global arrays, jointly, to one path
        # (orbax's own temporary folder and rename keep it atomic); a unique name per process would split it.
        saved = trainer.save(path)
    else:
        saved = save_atomically(trainer, path)
    if not settings.lead:
        return
    meta = {
        "backend": trainer.backend, "dataset": settings.dataset, "source": data.source, "mean": data.mean,
        "std": data.std, "test_accuracy": val.accuracy, "run_id": run.run_id, "epochs": settings.num_epochs,
        "dry_run": settings.dry_run,
    }
    write_atomically(_metadata_path(path), json.dumps(meta, indent=2).encode())
    run.log(f"checkpoint: {saved}")
    n = min(25, val.images)
    plot = prediction_grid(
        data.x_test[:n], data.y_test[:n], val.predictions[:n],
        title=f"{trainer.backend} · {settings.dataset} · test accuracy {val.accuracy:.2%}",
        name=f"mnist_{trainer.backend}_{settings.dataset}_predictions",
    )
    run.log(f"plot: {plot}")


def evaluate_checkpoint(trainer: Trainer, settings: MnistSettings, run: Run, data: Any) -> None:
    """`mnist evaluate <backend>`: reload the saved parameters and test them."""
    path = checkpoint_path(trainer.backend, settings.dataset)
    meta_path = _metadata_path(path)
    if not meta_path.exists():
        raise DataError(
            f"no {trainer.backend} checkpoint for {settings.dataset} under {CHECKPOINTS_DIR}/: "
            f"train one first with `mnist {trainer.backend} --dataset {settings.dataset}`"
        )
    try:
        meta = json.loads(meta_path.read_text())
        trainer.load(path)
    except Exception as exc:  # anything a damaged or foreign checkpoint raises (orbax, torch, json, OSError)
        reason = (str(exc).strip().splitlines() or [""])[0][:200]
        raise DataError(
            f"the {trainer.backend} checkpoint {path} is corrupt or does not fit this model "
            f"({type(exc).__name__}: {reason}); train a new one with `mnist {trainer.backend} --dataset {settings.dataset}`"
        ) from None
    shape = plan(settings, len(data.y_train), len(data.y_test))
    val = validate(trainer, run, shape, {"checkpoint": str(path), "trained_on": meta.get("source")}, "checkpoint")
    run.log(
        f"[bold]{trainer.backend}: checkpoint {path} · test accuracy {val.accuracy:.2%} on {val.images} images "
        f"({data.source}); at save time it was {meta.get('test_accuracy', float('nan')):.2%}[/]"
    )


def _params(settings: MnistSettings, shape: Plan, data: Any) -> dict[str, Any]:
    return {
        "dataset": settings.dataset, "source": data.source, "train_images": len(data.y_train),
        "test_images": len(data.y_test), "batch": shape.batch, "steps_per_epoch": shape.steps,
        "epochs": settings.num_epochs, "optimizer": settings.optimizer, "learning_rate": settings.lr,
        "schedule": settings.lr_schedule, "momentum": settings.momentum, "seed": settings.seed,
        "dry_run": settings.dry_run, "devices": settings.device_count, **process_params(settings),
    }


def devices_variant(backend: str, devices: int, processes: int = 1, process: int = 0) -> str | None:
    """Column label of a multi-device or multi-process run, shown next to the single-device one; a job's
    processes other than 0 get their own column ("· process I"), so no figure overwrites process 0's."""
    if processes > 1:
        label = f"{processes} processes" + (f" × {devices} devices" if devices > 1 else "")
        return label + (f" · process {process}" if process else "")
    if devices == 1:
        return None
    return f"{devices} devices" if backend == "flax" else f"{devices} processes"


def read_data(settings: DataSettings, log: Callable[[str], None]) -> Any:
    """The data pipeline's `load_data` (tests replace this function with synthetic data)."""
    from src.mnist.data import load_data

    return load_data(settings.dataset, settings.data_source, settings.data_dir, log=log)


def load_and_record(settings: DataSettings, run: Run, backend: str, variant: str | None = None) -> Any:
    """Load the data set through the data pipeline and record how long it took."""
    data, seconds = time_call(lambda: read_data(settings, run.log))
    run.record(
        backend=backend, variant=variant, case="data_load", device=settings.device_kind, dtype="float32",
        measurement=single(seconds),
        params={"dataset": settings.dataset, "source": data.source, **process_params(settings)},
        metrics={"train_images": len(data.y_train), "test_images": len(data.y_test), "mean": data.mean, "std": data.std},
    )
    run.log(f"data: {len(data.y_train):,} train + {len(data.y_test):,} test images ready in {seconds:.2f} s")
    return data


def parameter_table(title: str, rows: list[tuple[str, str, int]]) -> str:
    """A plain-text table of the model's parameters (name, shape, count) and their total."""
    width = max(len(name) for name, _, _ in rows)
    total = sum(count for _, _, count in rows)
    lines = [title, f"  {'parameter':<{width}}  {'shape':>14}  {'count':>10}"]
    lines += [f"  {name:<{width}}  {shape:>14}  {count:>10,}" for name, shape, count in rows]
    lines.append(f"  {'total':<{width}}  {'':>14}  {total:>10,}")
    return "\n".join(lines)
