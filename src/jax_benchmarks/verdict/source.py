"""Where the verdict reads its records from: one function, so that the store behind it can change here alone."""

from __future__ import annotations

from collections.abc import Callable

from jax_benchmarks.errors import NoResultsYet, StoreError
from jax_benchmarks.store.location import ResultsLocation, open_store, store_errors
from jax_benchmarks.store.record import SCHEMA_VERSION, Record


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
        # The hint names the command as the user invoked it (the CLI layer fills it in: NoResultsYet).
        raise NoResultsYet(f"no benchmark records{of_run} in {location}")
    return readable_versions(records, location, warn), run


def readable_versions(records: list[Record], location: ResultsLocation, warn: Callable[[str], None]) -> list[Record]:
    """The records of a schema this code knows, each mix said in one line through `warn` (the store is only read:
    nothing in it changes): records of a newer version are left out of the verdict (their fields may mean what
    this code cannot know); older ones are judged, lacking the fields added since. Only newer ones: StoreError."""
    versions = sorted({r.schema_version for r in records})
    newer = [r for r in records if r.schema_version > SCHEMA_VERSION]
    if newer and len(newer) == len(records):
        raise StoreError(f"every record in {location} was written by a newer jax-benchmarks (record schema "
                         f"{', '.join(map(str, versions))}; this one reads up to {SCHEMA_VERSION}): update "
                         "jax-benchmarks to judge them")
    if newer:
        runs = sorted({r.run_id for r in newer})
        warn(f"{len(newer)} record(s) in {location} (run(s) {', '.join(runs[:3])}{', …' if len(runs) > 3 else ''}) "
             f"were written by a newer jax-benchmarks (record schema {max(r.schema_version for r in newer)}; this "
             f"one reads up to {SCHEMA_VERSION}): left out of the verdict, still in the store")
    known = [v for v in versions if v <= SCHEMA_VERSION]
    if len(known) > 1:
        warn(f"{location} holds records of schema versions {', '.join(map(str, known))}: those before "
             f"{SCHEMA_VERSION} lack the fields added since (version 2: memory), so their findings leave those out")
    return [r for r in records if r.schema_version <= SCHEMA_VERSION]
