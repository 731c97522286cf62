"""Shared by the mnist tests: tiny synthetic data in place of the data pipeline, and the run options that
keep a training run to seconds."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

from jax_benchmarks.hardware.devices import resolve_device

# A dry run (3 steps of 16 images), one epoch, validation on 32-image batches, one timed repeat.
TINY = ("--dry-run", "--num-epochs", "1", "--train-batch-size", "16", "--test-batch-size", "32", "--repeats", "1",
        "--min-time", "0.01")  # one timed sample of the step and the peak: the tests check what ran, not the figures
# The case names those options give (`{op}_{shape}_{dtype}`, src/jax_benchmarks/mnist/cases.py).
LOAD, PEAK = "load_mnist_28x28_uint8", "matmul_peak_2048x2048_float32"
STEP, EPOCH, VALIDATION = "train_step_16x28x28_float32", "train_epoch_16x28x28_float32", "validation_32x28x28_float32"


def auto_cases_with_peak() -> list[str]:
    """The peak case under `--device auto`, as a list to splice into expected case names: the matmul peak is
    measured as a case on a CPU (what auto picks where no GPU is visible); a GPU's comes from its datasheet."""
    return [PEAK] if resolve_device("auto") == "cpu" else []


class FakeData(NamedTuple):
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str
    mean: float
    std: float

    # MnistData's stored images (uint8 there); only their shapes are read from a fake.
    @property
    def images_train(self) -> np.ndarray:
        return self.x_train[..., 0]

    @property
    def images_test(self) -> np.ndarray:
        return self.x_test[..., 0]


def synthetic_data(n_train: int = 96, n_test: int = 40, seed: int = 0) -> FakeData:
    """Noise images with one bright class-dependent band: learnable in a few steps."""
    rng = np.random.default_rng(seed)

    def make(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 10, n).astype(np.int32)
        x = rng.normal(0.0, 1.0, (n, 28, 28, 1)).astype(np.float32)
        for c in range(10):
            x[y == c, 2 * c:2 * c + 4, 4:24, 0] += 3.0
        return x, y

    x_train, y_train = make(n_train)
    x_test, y_test = make(n_test)
    return FakeData(x_train, y_train, x_test, y_test, "synthetic", 0.0, 1.0)


@pytest.fixture(autouse=True)
def _synthetic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training runs read the synthetic data (96 train, 40 test images); no comet.ml key is set."""
    monkeypatch.setattr("jax_benchmarks.training.cases.read_data", lambda settings, log: synthetic_data())
    monkeypatch.delenv("COMET_API_KEY", raising=False)


def by_case(records: list[dict[str, Any]], backend: str) -> dict[str, list[dict[str, Any]]]:
    """A backend's records by case name, in order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["backend"] == backend:
            out.setdefault(r["case"], []).append(r)
    return out
