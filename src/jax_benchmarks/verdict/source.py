"""Where the verdict reads its records from: one function, so that the store behind it can change here alone."""

from __future__ import annotations

from collections.abc import Callable

from jax_benchmarks.errors import StoreError
from jax_benchmarks.store.location import ResultsLocation, open_store, store_errors
from jax_benchmarks.store.record import Record


def read_results(location: ResultsLocation, warn: Callable[[str], None], run: str | None = None
                 ) -> tuple[list[Record], str | None]:
    """Every valid record of the store at `location` (a JSON-lines or SQLite file, or a postgresql:// URL),
    opened read-only, or only those of run `run` (its id or a unique prefix, as `report --run` takes it),
    with the run's full id. Bad records are skipped and reported through `warn`. No record is an error,
    as it is for `report`: a StoreError (exit 2) with a one-line reason, like every other store error."""
    from jax_benchmarks.report.select import resolve_run

    store = open_store(location, create=False, log=warn)
    try:
        with store_errors(store):
            if run is None:
                records = list(store.all_records())
            else:
                run = resolve_run(store, run, "--run")
                records = store.run_records(run)
        for message in store.warnings():
            warn(message)
    finally:
        store.close()
    if not records:
        of_run = f" of run {run}" if run is not None else ""
        raise StoreError(f"no benchmark records{of_run} in {location}: run a benchmark first, "
                         "e.g. `python main.py xla all`")
    return records, run
