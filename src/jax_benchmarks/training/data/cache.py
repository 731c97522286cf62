"""Decoded uint8 arrays cached as .npy under `<data_dir>/cache/<dataset>-<source>-u8v2/`.

Loading 70,000 images from the cache is a memory map: no pixel is read until a
model normalizes them. The folder name carries the format (uint8 pixels,
format 2), so a cache written in another format (float32 pixels, say) is never
read as this one; `meta.json` repeats the format. `meta.json` is written last, so a cache interrupted while being written
is never used; a cache whose fingerprint (input files' paths, sizes and
modification times) no longer matches is rebuilt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from jax_benchmarks.training.data.arrays import IMAGE_SIDE, RawSplits

CACHE_FORMAT = 2  # in the folder name and in meta.json
_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


class CacheEntry(NamedTuple):
    raw: RawSplits
    source: str  # where the arrays were decoded from
    mean: float
    std: float


def cache_path(data_dir: Path, dataset: str, kind: str) -> Path:
    return data_dir / "cache" / f"{dataset}-{kind}-u8v{CACHE_FORMAT}"


def files_fingerprint(paths: list[Path]) -> str:
    parts = []
    for path in sorted(paths):
        stat = path.stat()
        parts.append(f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}")
    return "|".join(parts)


def _read_meta(folder: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((folder / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def read_cache(folder: Path, fingerprint: str | None = None) -> CacheEntry | None:
    """The cached arrays, or None when absent, stale (fingerprint differs) or damaged."""
    meta = _read_meta(folder)
    if meta is None or meta.get("format") != CACHE_FORMAT:
        return None
    if fingerprint is not None and meta.get("fingerprint") != fingerprint:
        return None
    try:
        # Images memory-mapped: pages are read when a model normalizes them, not here.
        x_train = np.load(folder / "x_train.npy", mmap_mode="r")
        x_test = np.load(folder / "x_test.npy", mmap_mode="r")
        y_train = np.load(folder / "y_train.npy")
        y_test = np.load(folder / "y_test.npy")
        source, mean, std = str(meta["source"]), float(meta["mean"]), float(meta["std"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    for images, labels in ((x_train, y_train), (x_test, y_test)):
        if (images.dtype != np.uint8 or images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE)
                or labels.dtype != np.int32 or labels.shape != images.shape[:1]):
            return None
    return CacheEntry(RawSplits(x_train, y_train, x_test, y_test), source, mean, std)


def write_cache(folder: Path, entry: CacheEntry, fingerprint: str) -> None:
    """Write the arrays, then meta.json atomically (raises OSError, e.g. on a read-only data dir)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "meta.json").unlink(missing_ok=True)  # the old cache is invalid from here on
    for name, array in zip(_ARRAYS, entry.raw):
        # Replace, never truncate: another process may have the old file memory-mapped.
        temporary = folder / f"{name}.npy.{os.getpid()}.tmp"
        with temporary.open("wb") as stream:
            np.save(stream, np.ascontiguousarray(array))
        os.replace(temporary, folder / f"{name}.npy")
    meta = {
        "format": CACHE_FORMAT,
        "source": entry.source,
        "fingerprint": fingerprint,
        "mean": entry.mean,
        "std": entry.std,
        "train_images": len(entry.raw.x_train),
        "test_images": len(entry.raw.x_test),
    }
    temporary = folder / f"meta.json.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(meta, indent=2))
    os.replace(temporary, folder / "meta.json")
