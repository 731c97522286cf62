"""Options of `jit numpy|pytorch|jax|all` (the sweep) and `jit flax` (the mnist group's training, jitted and not).

Framework-free: the CLI imports this module to build `--help`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from jax_benchmarks.hardware.devices import MULTI_DEVICE
from jax_benchmarks.hardware.xla_flags import CpuConv, cpu_conv_field
from jax_benchmarks.settings import BenchSettings
from jax_benchmarks.training.settings import Schedule, TrainingSettings

# The array lengths of the sweep; each is run when --total-items reaches it.
ARRAY_LENGTHS: tuple[int, ...] = (10_000, 100_000, 1_000_000, 10_000_000)
Model = Literal["cnn"]


class SweepSettings(BenchSettings):
    """f(x) = 0.2·x + sin(x) + cos(2x) applied loop_count times to an array, per length."""

    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "total_items": 1e5}
    CHOICES: ClassVar[dict[str, Sequence[str]]] = {**BenchSettings.CHOICES, "device": MULTI_DEVICE}

    total_items: float = Field(
        1e8,
        ge=ARRAY_LENGTHS[0],
        le=1e10,
        description=(
            "Items per timed loop: each array length runs total_items / length times "
            "(lengths above it are skipped). Accepts 1e7 style."
        ),
    )

    @field_validator("total_items")
    @classmethod
    def _whole_number(cls, value: float) -> float:
        if value != int(value):
            raise ValueError(f"{value!r} is not a whole number of items")
        return value

    @property
    def items(self) -> int:
        return int(self.total_items)


class JitTrainingSettings(TrainingSettings):
    """`jit flax`: the mnist group's CNN, data and trainer, trained with the train step jitted and not jitted
    (Adam at a constant learning rate by default)."""

    # A dry run (3 steps of 32 images) on the embedded digits: no download, no hub lookup.
    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "dry_run": True, "train_batch_size": 32,
                                       "test_batch_size": 100, "data_source": "embedded"}

    model: Model = Field("cnn", description="cnn: the mnist group's CNN on MNIST digits (the one model).")
    num_epochs: int = Field(
        2, ge=1, le=100, json_schema_extra={"option": "--epochs"},
        description="Epochs per mode, each timed once (jax.jit's compile is timed apart, on the train step).",
    )
    train_batch_size: int = Field(128, ge=1, le=1024, description="Images per training step (the last, partial "
                                  "batch of an epoch is dropped).", json_schema_extra={"aliases": ["--batch-size"]})
    learning_rate: float | None = Field(0.01, ge=1e-6, le=1.0, description="Learning rate (constant by default).")
    schedule: Schedule | None = Field("constant", description="Learning-rate schedule over epochs × steps.")
    show_jaxpr: bool = Field(False, description="Print the jaxpr of the train step for one batch.")
    plot: bool = Field(False, description="Write a bar chart of the epoch times under data/plots/.")
    xla_cpu_conv: CpuConv = cpu_conv_field()
    train_images: int | None = Field(
        None, ge=1, le=1_000_000, description="Train on the first N training images only (default: all)."
    )
