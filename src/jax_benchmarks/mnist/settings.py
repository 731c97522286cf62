"""Options of `mnist flax|pytorch|all` beyond one training run (`jax_benchmarks.training.settings`): devices, where
this process stands in a multi-process job, comet.ml tracking, the kernels of XLA:CPU's convolutions; validated by
pydantic."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, ClassVar

from pydantic import Field, model_validator

from jax_benchmarks.cli.plots import PLOTS_DIR
from jax_benchmarks.hardware.devices import cpu_count, gpu_names
from jax_benchmarks.hardware.xla_flags import CpuConv, cpu_conv_field
from jax_benchmarks.settings import CompileMode, OptionError, compile_field, writable_dir
from jax_benchmarks.tracking import TrackingMode
from jax_benchmarks.training.settings import EvaluateSettings, TrainingSettings

RUN_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
CHECKPOINTS_DIR = Path("data/checkpoints")


class MnistSettings(TrainingSettings):
    """`mnist flax|pytorch|all`: training, plus devices, where this process stands in a multi-process job (1
    process: a plain single-process run) and tracking; the model is saved unless --no-save."""

    # One epoch of a few batches on the embedded digits (no download, no hub lookup), no tracking.
    QUICK: ClassVar[dict[str, Any]] = {**EvaluateSettings.QUICK, "num_epochs": 1, "dry_run": True,
                                       "train_batch_size": 32, "comet": "off"}

    num_processes: int = Field(
        1, ge=1, le=4096,
        description="Processes in the job, over all hosts (under torchrun / srun: read from their environment).",
    )
    process_id: int = Field(0, ge=0, le=4095, description="This process's index in the job; 0 prints the tables.")
    coordinator: str | None = Field(
        None, description="HOST:PORT of process 0: JAX's coordinator, PyTorch's TCP store (not needed under torchrun).",
    )
    local_rank: int | None = Field(
        None, ge=0, le=1023, description="This process's index on its host: picks its GPU (torchrun's LOCAL_RANK).",
    )
    launch_local: int | None = Field(
        None, ge=1, le=64, description="Start this many processes of this command on this host and supervise them.",
    )
    run_id: str | None = Field(
        None, description="Record under this run id (process 0's id reaches the others through the runtime).",
    )
    dist_timeout: int = Field(
        120, ge=5, le=3600,
        description="Seconds to wait for the rendezvous, a collective or a silent process before the job fails.",
    )

    comet: TrackingMode = Field(
        "auto", description="comet.ml tracking: auto = online when COMET_API_KEY is set, else skipped."
    )
    devices: str = Field(
        "1", description="Devices to train on: a number or 'all' (CPU: one XLA device / process per core)."
    )
    save: bool = Field(
        True, description="After the last epoch, save the model under data/checkpoints/ (what `mnist evaluate` "
                          "reloads) and a plot of its test predictions under data/plots/; --no-save writes neither "
                          "(a verdict's rounds: they leave a model trained by hand in place).",
    )
    # Flax always jits its step; one process, one device.
    compile_mode: CompileMode | None = compile_field("the train step")

    @model_validator(mode="after")
    def _check_processes(self) -> MnistSettings:
        if self.process_id >= self.num_processes:
            raise OptionError(
                "--process-id",
                f"{self.process_id} is not a process of a {self.num_processes}-process job; "
                f"allowed: 0–{self.num_processes - 1}",
            )
        if self.coordinator is not None:
            host, _, port = self.coordinator.rpartition(":")
            if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
                raise OptionError("--coordinator", f"{self.coordinator!r} is not HOST:PORT with a port 1–65535")
        if self.run_id is not None and not re.fullmatch(RUN_ID_PATTERN, self.run_id):
            raise OptionError("--run-id", f"{self.run_id!r}: letters, digits, '_', '.', '-' (at most 64)")
        if self.compile_mode is not None and (self.num_processes > 1 or self.launch_local is not None):
            raise OptionError("--compile", "compiles the step of one process on one device; leave out "
                                           "--num-processes and --launch-local")
        if self.launch_local is not None and (self.num_processes > 1 or self.coordinator is not None):
            raise OptionError(
                "--launch-local", "starts its own processes; leave out --num-processes, --process-id and --coordinator"
            )
        return self

    @model_validator(mode="after")
    def _check(self) -> MnistSettings:
        if self.comet == "online" and not os.environ.get("COMET_API_KEY"):
            raise OptionError("--comet", "online needs the COMET_API_KEY environment variable; use offline or off")
        # Training saves a checkpoint and a plot: their folders are checked before any work, as an unwritable one
        # found only after training would lose the trained model.
        if self.save:
            writable_dir(CHECKPOINTS_DIR, "checkpoints")
            writable_dir(PLOTS_DIR, "plots")
        devices = self.device_count  # validates --devices
        if self.compile_mode is not None and devices > 1:
            raise OptionError("--compile", "compiles the step of one process on one device; leave --devices at 1")
        if self.multi_process and devices > 1 and self.device_kind == "cpu":
            raise OptionError("--devices", "a multi-process job on CPU runs one device per process; leave it at 1")
        total = devices * self.num_processes
        if self.train_batch_size % total:
            where = f"{devices} devices"
            if self.num_processes > 1:
                where = f"{total} devices of {self.num_processes} processes"
            raise OptionError(
                "--train-batch-size",
                f"{self.train_batch_size} does not split evenly over {where}; use a multiple of {total}",
            )
        return self

    @property
    def lead(self) -> bool:
        """Process 0 prints, tracks, validates into the records and writes the checkpoint's metadata."""
        return self.process_id == 0

    @property
    def job_place(self) -> tuple[int, int]:
        return self.process_id, self.num_processes

    @property
    def multi_process(self) -> bool:
        return self.num_processes > 1

    @property
    def device_count(self) -> int:
        """--devices as a number, checked against what this machine has."""
        available = available_devices(self.device_kind)
        what = f"{available} GPU(s)" if self.device_kind == "gpu" else f"{available} CPU core(s)"
        if self.devices == "all":
            return available
        try:
            count = int(self.devices)
        except ValueError:
            raise OptionError("--devices", f"{self.devices!r} is not a number or 'all'") from None
        if count < 1:
            raise OptionError("--devices", f"{count} is not allowed; allowed: 1 ≤ value ≤ {available} or 'all'")
        if count > available:
            raise OptionError("--devices", f"{count} requested but this machine has {what}; allowed: 1–{available} or 'all'")
        return count


class FlaxSettings(MnistSettings):
    """`mnist flax|all`: MnistSettings plus which kernels run the convolutions on XLA:CPU."""

    xla_cpu_conv: CpuConv = cpu_conv_field()


def available_devices(kind: str) -> int:
    """GPUs when training on the GPU, else the cores this process may use."""
    return len(gpu_names()) if kind == "gpu" else cpu_count()


def trained_settings(settings: EvaluateSettings) -> MnistSettings:
    """The settings of the model a command trains or tests: a training command's own; for `mnist evaluate`, the
    settings of a model to load a checkpoint into: its options, training's defaults (the model's shape does not
    depend on them; one process, one device)."""
    if isinstance(settings, MnistSettings):
        return settings
    return MnistSettings.model_construct(**dict(settings))
