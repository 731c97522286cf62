"""Tiny MNIST-like data on disk: IDX files (plain or gzipped, both spellings) and hub-layout parquet.

The images are learnable: class c is a bright 6x6 square at its own place on
a noisy background, so a model reaches high accuracy within an epoch.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from jax_benchmarks.training.data.arrays import I32, IMAGE_SIDE, NUM_CLASSES, U8, RawSplits
from jax_benchmarks.training.data.idx import write_idx_files

HUB_SPLIT_FILES = {"train": "train-00000-of-00001.parquet", "test": "test-00000-of-00001.parquet"}


def tiny_digits(count: int, seed: int = 0) -> tuple[U8, I32]:
    """`count` images, every class present (as evenly as possible), in shuffled order."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(count) % NUM_CLASSES).astype(np.int32)
    images = rng.integers(0, 60, size=(count, IMAGE_SIDE, IMAGE_SIDE), dtype=np.uint8)
    rows, cols = 3 + 12 * (labels // 5), 1 + 5 * (labels % 5)
    for dy in range(6):  # 36 vectorized writes, whatever the count
        for dx in range(6):
            images[np.arange(count), rows + dy, cols + dx] = 200 + rng.integers(0, 56, size=count)
    return images, labels


def tiny_raw(train: int = 60, test: int = 20, seed: int = 0) -> RawSplits:
    x_train, y_train = tiny_digits(train, seed)
    x_test, y_test = tiny_digits(test, seed + 1)
    return RawSplits(x_train, y_train, x_test, y_test)


def write_idx(folder: Path, raw: RawSplits | None = None, *, gz: bool = False, dotted: bool = False) -> RawSplits:
    """The four IDX files in `folder` (e.g. `data_dir / "mnist"`); returns what was written."""
    raw = raw if raw is not None else tiny_raw()
    write_idx_files(folder, raw, gz=gz, dotted=dotted)
    return raw


def png_bytes(image: U8) -> bytes:
    """One image as PIL writes PNGs (as the hub's parquet files hold them)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image, mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def write_parquet(folder: Path, raw: RawSplits | None = None) -> RawSplits:
    """`folder/train-00000-of-00001.parquet` and `test-…` with the hub's schema: image {bytes, path}, label.

    Written by `datasets` itself, so the files carry the same feature metadata
    (Image, ClassLabel) as `ylecun/mnist`'s `mnist/` folder.
    """
    import datasets  # type: ignore[import-untyped]

    raw = raw if raw is not None else tiny_raw()
    features = datasets.Features({
        "image": datasets.Image(),
        "label": datasets.ClassLabel(names=[str(digit) for digit in range(NUM_CLASSES)]),
    })
    folder.mkdir(parents=True, exist_ok=True)
    for split, images, labels in (("train", raw.x_train, raw.y_train), ("test", raw.x_test, raw.y_test)):
        columns = {
            "image": [{"bytes": png_bytes(image), "path": None} for image in images],
            "label": labels.tolist(),
        }
        datasets.Dataset.from_dict(columns, features=features).to_parquet(str(folder / HUB_SPLIT_FILES[split]))
    return raw
