"""The training data of `jit flax`: the MLP's 2-D toy set, or MNIST images for the CNN.

The toy set follows the "JAX speed test" article: two Gaussian blobs plus two
concentric circles in the plane. Each of the four shapes is one class, so the
MLP's log-softmax has four outputs and the circles need its non-linearity.
Built with NumPy from `--seed`, so both training modes see identical data.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.jit.settings import JitTrainingSettings, toy_train_points
from jax_benchmarks.mnist.names import DataSource

BLOB_CENTERS = ((-3.0, -3.0), (3.0, 3.0))
BLOB_STD = 0.7
CIRCLE_RADII = (1.0, 2.0)
CIRCLE_NOISE = 0.1
TOY_DESCRIPTION = "toy 2-D set: 2 Gaussian blobs + 2 concentric circles, 4 classes"
TOY_FEATURES = 2


class TrainingArrays(NamedTuple):
    """Train and test arrays: float32 features, int32 labels."""

    description: str
    x_train: NDArray[np.float32]
    y_train: NDArray[np.int32]
    x_test: NDArray[np.float32]
    y_test: NDArray[np.int32]
    classes: int


@dataclass(frozen=True)
class DataShape:
    """What the case name and the record's params say about the training data."""

    description: str
    train_examples: int
    example_shape: tuple[int, ...]


def toy_dataset(points: int, seed: int) -> TrainingArrays:
    """`points` 2-D points: blob, blob, inner circle, outer circle (classes 0-3), split 80/20."""
    rng = np.random.default_rng(seed)
    sizes = [points // 4] * 3 + [points - 3 * (points // 4)]
    parts: list[NDArray[np.float64]] = []
    for center, size in zip(BLOB_CENTERS, sizes[:2]):
        parts.append(rng.normal(loc=center, scale=BLOB_STD, size=(size, 2)))
    for radius, size in zip(CIRCLE_RADII, sizes[2:]):
        angle = rng.uniform(0.0, 2 * np.pi, size)
        ring = radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)
        parts.append(ring + rng.normal(scale=CIRCLE_NOISE, size=(size, 2)))
    x = np.concatenate(parts).astype(np.float32)
    y = np.repeat(np.arange(4, dtype=np.int32), sizes)
    order = rng.permutation(points)
    x, y = x[order], y[order]
    train = toy_train_points(points)
    return TrainingArrays(TOY_DESCRIPTION, x[:train], y[:train], x[train:], y[train:], classes=4)


def load_mnist(
    source: DataSource, data_dir: Path, train_images: int | None, log: Callable[[str], None]
) -> TrainingArrays:
    """MNIST through the mnist group's loader (NHWC float32, normalized; int32 labels)."""
    # Imported by name at run time: the jit group only needs the mnist group for --model cnn.
    data = importlib.import_module("jax_benchmarks.mnist.data").load_data(
        dataset="mnist", source=source, data_dir=data_dir, log=log
    )
    x_train = np.asarray(data.x_train, dtype=np.float32)
    y_train = np.asarray(data.y_train, dtype=np.int32)
    if train_images is not None:
        x_train, y_train = x_train[:train_images], y_train[:train_images]
    return TrainingArrays(
        f"MNIST ({data.source})", x_train, y_train,
        np.asarray(data.x_test, dtype=np.float32), np.asarray(data.y_test, dtype=np.int32), classes=10,
    )


def load_images(settings: JitTrainingSettings, log: Callable[[str], None]) -> TrainingArrays:
    """The CNN's data; tests replace this function to train on tiny synthetic images."""
    return load_mnist(settings.data_source, settings.data_dir, settings.train_images, log)


def load_training_arrays(settings: JitTrainingSettings, log: Callable[[str], None]) -> TrainingArrays:
    if settings.model == "mlp":
        return toy_dataset(settings.points, settings.seed)
    return load_images(settings, log)


def shape_of(arrays: TrainingArrays) -> DataShape:
    return DataShape(arrays.description, len(arrays.y_train), tuple(arrays.x_train.shape[1:]))


def toy_shape(settings: JitTrainingSettings) -> DataShape:
    """The toy set's shape, known from the settings without building it."""
    return DataShape(TOY_DESCRIPTION, toy_train_points(settings.points), (TOY_FEATURES,))
