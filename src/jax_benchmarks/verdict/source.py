"""Where the verdict reads its records from: one function, so that the store behind it can change here alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from jax_benchmarks.store.location import open_store, store_errors
from jax_benchmarks.store.record import Record


def read_results(location: Path | str, warn: Callable[[str], None]) -> list[Record]:
    """Every valid record of the store at `location` (a JSON-lines or SQLite file, or a postgresql:// URL);
    bad lines are skipped and reported through `warn`. Raises StoreError with a one-line reason."""
    store = open_store(location, create=False, log=warn)
    try:
        with store_errors(store):
            records = list(store.all_records())
        for message in store.warnings():
            warn(message)
    finally:
        store.close()
    return records
