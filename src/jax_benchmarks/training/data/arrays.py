"""Decoded splits, their checks, and normalization with the training set's statistics."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from jax_benchmarks.errors import DataError

U8 = npt.NDArray[np.uint8]
I32 = npt.NDArray[np.int32]
F32 = npt.NDArray[np.float32]

IMAGE_SIDE = 28
NUM_CLASSES = 10


class MnistData(NamedTuple):
    """MNIST-like data as decoded (uint8 pixels), normalized when a model reads it.

    The images stay uint8 (a memory map when they come from the decoded cache):
    55 MB for full MNIST instead of 220 MB of float32, and loading from the cache
    reads no pixel. `x_train` / `x_test` (or `normalized(...)` for a slice)
    produce the float32 inputs a model takes.
    """

    images_train: U8  # [N, 28, 28] pixels 0-255
    y_train: I32  # [N]
    images_test: U8  # [M, 28, 28] pixels 0-255
    y_test: I32  # [M]
    source: str  # human-readable origin, e.g. "local IDX files in data/mnist"
    mean: float  # training pixel mean in [0, 1] units (MNIST ≈ 0.1307)
    std: float  # training pixel std in [0, 1] units (MNIST ≈ 0.3081)

    def normalized(self, images: U8) -> F32:
        """`images` (any of these) as float32 [n, 28, 28, 1] of (x/255 - mean) / std, the training statistics."""
        return normalize(images, self.mean, self.std)

    @property
    def x_train(self) -> F32:
        """The training images normalized: a new float32 array at each access (keep it)."""
        return self.normalized(self.images_train)

    @property
    def x_test(self) -> F32:
        """The test images normalized: a new float32 array at each access (keep it)."""
        return self.normalized(self.images_test)


class RawSplits(NamedTuple):
    """Decoded uint8 images [N, 28, 28] and int32 labels [N] of both splits."""

    x_train: U8
    y_train: I32
    x_test: U8
    y_test: I32


def checked_split(images: U8, labels: npt.NDArray[np.integer], what: str) -> tuple[U8, I32]:
    """Refuse a split whose shapes, counts or labels are not MNIST's."""
    if images.ndim != 3 or images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE):
        raise DataError(f"{what}: images have shape {images.shape}, expected [N, 28, 28]")
    if labels.ndim != 1 or len(labels) != len(images):
        raise DataError(f"{what}: {len(images):,} images but {labels.size:,} labels")
    if len(images) == 0:
        raise DataError(f"{what}: no images")
    if labels.min() < 0 or labels.max() >= NUM_CLASSES:
        raise DataError(f"{what}: labels must be 0-9, found {int(labels.min())}..{int(labels.max())}")
    return images, labels.astype(np.int32, copy=False)


_STATS_BLOCK = 4096  # images per block: a 6 MB uint16 buffer, reused, instead of a 94 MB temporary


def pixel_stats(x_train: U8) -> tuple[float, float]:
    """Mean and (population) std of the training pixels, in [0, 1] units.

    The pixel sum and the sum of squares are exact integers (uint64), taken
    block by block with one reused uint16 buffer for the squares (255² fits):
    no float copy, and no large temporary whose fresh pages would cost more
    than the arithmetic.
    """
    flat = x_train.reshape(len(x_train), -1)
    squares = np.empty((min(_STATS_BLOCK, len(flat)), flat.shape[1]), dtype=np.uint16)
    total = total_sq = 0
    for start in range(0, len(flat), _STATS_BLOCK):
        block = flat[start:start + _STATS_BLOCK]
        buffer = squares[:len(block)]
        np.multiply(block, block, out=buffer, dtype=np.uint16)
        total += int(block.sum(dtype=np.uint64))
        total_sq += int(buffer.sum(dtype=np.uint64))
    count = flat.size
    mean = total / count
    std = math.sqrt(max(total_sq / count - mean * mean, 0.0))
    if std == 0.0:
        raise DataError("training images are constant (std 0): cannot normalize")
    return mean / 255.0, std / 255.0


_BLOCK_IMAGES = 512  # 1.6 MB of float32 output: still in cache for the second pass
_MAX_THREADS = 4


def _normalize_range(images: U8, out: F32, scale: np.float32, shift: np.float32, lo: int, hi: int) -> None:
    for start in range(lo, hi, _BLOCK_IMAGES):
        stop = min(start + _BLOCK_IMAGES, hi)
        np.multiply(images[start:stop], scale, out=out[start:stop], dtype=np.float32)
        np.subtract(out[start:stop], shift, out=out[start:stop])


def normalize(images: U8, mean: float, std: float) -> F32:
    """uint8 [N, 28, 28] -> float32 [N, 28, 28, 1] of (x/255 - mean) / std.

    One ufunc casts and scales a block of images, a second shifts it while it
    is still in cache; NumPy releases the GIL, so blocks run on several threads.
    """
    out = np.empty((*images.shape, 1), dtype=np.float32)
    flat = out.reshape(images.shape)
    scale, shift = np.float32(1.0 / (255.0 * std)), np.float32(mean / std)
    threads = max(1, min(_MAX_THREADS, os.cpu_count() or 1, len(images) // (8 * _BLOCK_IMAGES)))
    if threads == 1:
        _normalize_range(images, flat, scale, shift, 0, len(images))
        return out
    bounds = np.linspace(0, len(images), threads + 1).astype(int).tolist()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(_normalize_range, images, flat, scale, shift, lo, hi)
                       for lo, hi in zip(bounds[:-1], bounds[1:])]:
            future.result()
    return out


def to_mnist_data(raw: RawSplits, source: str, stats: tuple[float, float] | None = None) -> MnistData:
    """Both splits with the training statistics (computed unless given); no pixel is converted here."""
    mean, std = stats if stats is not None else pixel_stats(raw.x_train)
    return MnistData(
        images_train=raw.x_train,
        y_train=raw.y_train,
        images_test=raw.x_test,
        y_test=raw.y_test,
        source=source,
        mean=mean,
        std=std,
    )
