"""HuggingFace `datasets`: the hub repositories and local parquet files in the hub's layout.

Both go through `datasets.load_dataset` and then one decoding path: the arrow
table's `image` column (struct of PNG `bytes` and `path`) is decoded in bulk
by `png.decode_png_array`, never image by image through `Image` features.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlparse

import numpy as np

from jax_benchmarks.errors import DataError
from jax_benchmarks.frameworks.available import HF_DATASETS, PYARROW, missing_libraries, unavailable_reason
from jax_benchmarks.training.data.arrays import RawSplits, checked_split
from jax_benchmarks.training.data.png import decode_png_array

HUB_REPOS = {"mnist": "ylecun/mnist", "fashion_mnist": "zalando-datasets/fashion_mnist"}
OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
PROBE_TIMEOUT_S = 1.5
_TRUE = {"1", "ON", "YES", "TRUE"}


class ParquetFiles(NamedTuple):
    folder: Path
    train: list[Path]
    test: list[Path]


def find_parquet_files(folder: Path) -> ParquetFiles | None:
    """`train-*.parquet` and `test-*.parquet` in `folder` (the hub's `mnist/` folder layout)."""
    train = sorted(folder.glob("train-*.parquet"))
    test = sorted(folder.glob("test-*.parquet"))
    if not train and not test:
        return None
    if not train or not test:
        missing = "train-*.parquet" if not train else "test-*.parquet"
        raise DataError(f"incomplete parquet files in {folder}: missing {missing}")
    return ParquetFiles(folder, train, test)


def offline_flag() -> str | None:
    """The HF offline variable that is set, if any."""
    for name in OFFLINE_FLAGS:
        if os.environ.get(name, "").upper() in _TRUE:
            return name
    return None


def set_offline_flags() -> None:
    """Make HuggingFace libraries fail fast instead of retrying an unreachable hub."""
    for name in OFFLINE_FLAGS:
        os.environ[name] = "1"
    # Both libraries read the variables once at import time.
    for module, attributes in (("huggingface_hub.constants", ("HF_HUB_OFFLINE",)),
                               ("datasets.config", ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"))):
        loaded = sys.modules.get(module)
        for attribute in attributes if loaded is not None else ():
            setattr(loaded, attribute, True)


def _probe_target() -> tuple[str, int]:
    """The host a hub request would connect to first: the HTTPS proxy if one is set, else the endpoint."""
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    url = urlparse(proxy or os.environ.get("HF_ENDPOINT") or "https://huggingface.co")
    default_port = 443 if url.scheme == "https" else 80
    return url.hostname or "huggingface.co", url.port or default_port


def probe_hub(timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when a TCP connection to the hub succeeds within `timeout_s`, else the reason.

    Runs in a daemon thread so that a hanging DNS lookup (which ignores socket
    timeouts) cannot hold the command longer than the timeout either.
    """
    host, port = _probe_target()
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            socket.create_connection((host, port), timeout=timeout_s).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(f"{host}:{port}: {exc.strerror or exc}")

    thread = threading.Thread(target=attempt, daemon=True, name="hub-probe")
    thread.start()
    thread.join(timeout_s + 0.5)
    return outcome[0] if outcome else f"{host}:{port}: no answer within {timeout_s:g} s"


def hub_cache_present(dataset: str, data_dir: Path) -> bool:
    """Did an earlier `load_dataset` leave this repository in `data_dir` (usable offline)?"""
    owner, name = HUB_REPOS[dataset].split("/")
    return any(data_dir.glob(f"{owner}___{name}*"))


def _decode_split(dataset: Any, where: str) -> tuple[Any, Any]:
    """One `datasets.Dataset` split -> (uint8 [N, 28, 28], labels), through arrow, not Python objects."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    table = dataset.with_format("arrow")[:]
    missing = {"image", "label"} - set(table.column_names)
    if missing:
        raise DataError(f"{where}: no column {', '.join(sorted(missing))} (columns: {', '.join(table.column_names)})")
    column = table.column("image")
    if pa.types.is_struct(column.type):
        if column.type.get_field_index("bytes") < 0:
            raise DataError(f"{where}: image column has no 'bytes' field ({column.type})")
        column = pc.struct_field(column, "bytes")
    labels_column = table.column("label")
    if labels_column.null_count:
        raise DataError(f"{where}: {labels_column.null_count} missing labels")
    if not pa.types.is_integer(labels_column.type):
        raise DataError(f"{where}: label column has type {labels_column.type}, expected integers")
    labels = np.asarray(labels_column.to_numpy())
    return decode_png_array(column, where), labels


def decode_dataset_dict(splits: Any, where: str) -> RawSplits:
    """A `DatasetDict` with train and test splits -> decoded, checked arrays."""
    missing = {"train", "test"} - set(splits.keys())
    if missing:
        raise DataError(f"{where}: no {', '.join(sorted(missing))} split (splits: {', '.join(splits.keys())})")
    x_train, y_train = checked_split(*_decode_split(splits["train"], f"{where} train"), f"{where} train")
    x_test, y_test = checked_split(*_decode_split(splits["test"], f"{where} test"), f"{where} test")
    return RawSplits(x_train, y_train, x_test, y_test)


def require_datasets(what: str) -> None:
    """DataError (one line, exit 2) naming the extra when `datasets` or pyarrow is not installed."""
    missing = missing_libraries(HF_DATASETS, PYARROW)
    if missing:
        raise DataError(f"{what}: {unavailable_reason(missing)}")


def load_hub_splits(dataset: str, data_dir: Path) -> Any:
    """`datasets.load_dataset` of the hub repository (downloads, or its cache in `data_dir`)."""
    require_datasets(f"hub {HUB_REPOS[dataset]}")
    import datasets  # type: ignore[import-untyped]

    return datasets.load_dataset(HUB_REPOS[dataset], cache_dir=str(data_dir))


def read_hub(dataset: str, data_dir: Path) -> RawSplits:
    """Load and decode the hub repository; any failure becomes a one-line DataError."""
    repo = HUB_REPOS[dataset]
    try:
        splits = load_hub_splits(dataset, data_dir)
    except DataError:
        raise
    except Exception as exc:  # network, offline mode, HTTP errors: datasets raises many kinds
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(f"cannot load hub {repo}: {first_line}") from None
    return decode_dataset_dict(splits, f"hub {repo}")


def read_parquet(files: ParquetFiles, data_dir: Path) -> RawSplits:
    """Local parquet files through `load_dataset("parquet")`, then the hub's decoding path."""
    where = f"parquet files in {files.folder}"
    require_datasets(where)
    import datasets

    data_files = {"train": [str(p) for p in files.train], "test": [str(p) for p in files.test]}
    try:
        splits = datasets.load_dataset("parquet", data_files=data_files, cache_dir=str(data_dir))
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError, datasets its own errors
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(f"cannot read {where}: {first_line}") from None
    return decode_dataset_dict(splits, where)
