"""Where the verdict reads its records from: one function, so that the store behind it can change here alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jax_benchmarks.store.results import Record, read_records


def read_results(path: Path, warn: Callable[[str], None]) -> list[Record]:
    """Every valid record of the results at `path` (bad lines are skipped and reported through `warn`)."""
    return list(read_records(path, warn))
