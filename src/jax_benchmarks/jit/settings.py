"""Options of `jit numpy|pytorch|jax|all` (the sweep) and `jit flax` (training).

Framework-free: the CLI imports this module to build `--help`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from jax_benchmarks.hardware.devices import MULTI_DEVICE
from jax_benchmarks.settings import BenchSettings, OptionError
from jax_benchmarks.mnist.names import DataSource

# The array lengths of the sweep; each is run when --total-items reaches it.
ARRAY_LENGTHS: tuple[int, ...] = (10_000, 100_000, 1_000_000, 10_000_000)
TRAIN_FRACTION = 0.8  # 80/20 split of the MLP's toy data set

Model = Literal["mlp", "cnn"]


def toy_train_points(points: int) -> int:
    """The MLP toy set's training split of `points` (the rest is the test set)."""
    return int(points * TRAIN_FRACTION)


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


class JitTrainingSettings(BenchSettings):
    """`jit flax`: one training epoch with the step jitted and not jitted (flax.nnx + optax)."""

    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "points": 1000}

    model: Model = Field("mlp", description="mlp: 2-D toy data set; cnn: MNIST digits (the mnist group's data).")
    epochs: int = Field(
        2, ge=1, le=100,
        description="Epochs per mode; the first (compilation) is reported apart from the others.",
    )
    batch_size: int = Field(128, ge=1, le=8192, description="Examples per training step.")
    learning_rate: float = Field(0.01, gt=0.0, le=1.0, description="Adam learning rate.")
    drop_last: bool = Field(False, description="Drop the last, smaller batch of each epoch (one compilation only).")
    show_jaxpr: bool = Field(False, description="Print the jaxpr of the train step for one batch.")
    plot: bool = Field(False, description="Write a bar chart of the epoch times under data/plots/.")
    points: int = Field(10_000, ge=20, le=10_000_000, description="mlp: points in the toy data set (80 % train).")
    train_images: int | None = Field(
        None, ge=1, le=1_000_000, description="cnn: train on the first N training images only (default: all)."
    )
    data_source: DataSource = Field(
        "auto", description="cnn: where MNIST comes from (auto: local cache → hub → embedded 5,000 digits)."
    )
    data_dir: Path = Field(Path("data"), description="cnn: directory of MNIST files and the decoded cache.")

    @model_validator(mode="after")
    def _batch_fits(self) -> JitTrainingSettings:
        train = toy_train_points(self.points)
        if self.model == "mlp" and self.drop_last and self.batch_size > train:
            raise OptionError(
                "--batch-size",
                f"{self.batch_size} is larger than the {train} training points, so --drop-last leaves no batch",
            )
        return self
