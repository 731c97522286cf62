"""The views a report reads from a results store, and the order of runs they share.

A store answers each view with what it shows (the records of one run, the runs of one group), never with
its whole history: the SQL stores from their indexes (src/jax_benchmarks/store/sql.py), the JSON-lines
store by grouping its one index-only read (src/jax_benchmarks/store/jsonl.py) with the functions below.
Records come back complete (checked, samples included), each run's records in the order they were written.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from jax_benchmarks.store.record import Record, Scalar

Env = Mapping[str, Scalar]
# Reads the records of one earlier run when called: a view hands them out only for the run that is taken.
EarlierRun = tuple[Env, Callable[[], list[Record]]]


class ResultsStore(Protocol):
    """Where records are appended and read back (JSON lines, SQLite or PostgreSQL)."""

    # What the store's reads and writes raise when its file or server fails (`reason` puts one in a line).
    driver_errors: tuple[type[Exception], ...]

    def reason(self, exc: BaseException) -> str: ...

    @property
    def location(self) -> str:
        """Where the records are, as shown to a person (a password left out)."""
        ...

    def append(self, record: Record) -> None:
        """Store one record whole (one transaction or one write) or raise ResultsWriteError, keeping none of it."""
        ...

    def is_empty(self) -> bool: ...

    def groups(self, backend: str | None) -> list[str]:
        """The groups with records (of `backend`, when given), sorted."""
        ...

    def backends(self, group: str | None) -> list[str]:
        """The backends with records (in `group`, when given), sorted."""
        ...

    def latest_run(self, group: str, backend: str | None) -> list[Record]:
        """The records of the group's latest run (only those of `backend`, when given; that backend's latest)."""
        ...

    def run_ids(self, prefix: str) -> list[str]:
        """The run ids starting with `prefix`, oldest run first."""
        ...

    def latest_run_ids(self, count: int) -> list[str]:
        """The ids of the `count` latest runs, latest first."""
        ...

    def run_records(self, run_id: str) -> list[Record]:
        """Every record of one run."""
        ...

    def earlier_runs(self, current: Sequence[Record], backend: str | None) -> Iterator[EarlierRun]:
        """The runs of `current`'s group before it (of `backend`, when given), latest first: the env of each
        run's last record, and a call that reads its records."""
        ...

    def history(self, group: str | None, backend: str | None, *, samples: bool = True) -> list[Record]:
        """Every record of the group and backend (all, where None), in the order they were written.
        samples=False: a store may leave `samples_s` empty, for a view that shows medians and IQRs only
        (the samples are most of a record's bytes, and reading them most of a long history's cost)."""
        ...

    def all_records(self) -> Iterator[Record]:
        """Every record, in the order they were written (an export)."""
        ...

    def warnings(self) -> list[str]:
        """One summary per source of the corrupt records skipped so far."""
        ...

    def close(self) -> None: ...


# ------------------------------------------------------- runs in memory ---

def run_key(records: Sequence[Record]) -> tuple[str, str]:
    """Order of runs: the time of their last record, then the (time-sortable) run id."""
    return (max(r.timestamp for r in records), records[0].run_id)


def by_run(records: Iterable[Record]) -> dict[str, list[Record]]:
    runs: dict[str, list[Record]] = {}
    for record in records:
        runs.setdefault(record.run_id, []).append(record)
    return runs


def by_group(records: Iterable[Record]) -> dict[str, list[Record]]:
    groups: dict[str, list[Record]] = {}
    for record in records:
        groups.setdefault(record.group, []).append(record)
    return groups


def group_runs(records: Iterable[Record]) -> dict[str, list[list[Record]]]:
    """Per group, the records of each of its runs, in one pass over the records (runs in order of first record)."""
    runs: dict[tuple[str, str], list[Record]] = {}
    for record in records:
        runs.setdefault((record.group, record.run_id), []).append(record)
    groups: dict[str, list[list[Record]]] = {}
    for (group, _), run in runs.items():
        groups.setdefault(group, []).append(run)
    return groups


def latest_runs(records: Sequence[Record]) -> list[list[Record]]:
    """For each group, the records of its latest run."""
    return [max(runs, key=run_key) for runs in group_runs(records).values()]


def split_runs(records: Sequence[Record]) -> list[list[Record]]:
    """One list per (group, run): the unit a table shows."""
    return [run for runs in group_runs(records).values() for run in runs]


class RunHistory:
    """Every run of each group in time order, grouped once (a report asks for a previous run per table)."""

    def __init__(self, records: Iterable[Record]) -> None:
        self.runs: dict[str, list[list[Record]]] = {}
        self.keys: dict[str, list[tuple[str, str]]] = {}
        for group, runs in group_runs(records).items():
            keyed = sorted(((run_key(run), run) for run in runs), key=lambda pair: pair[0])
            self.keys[group] = [key for key, _ in keyed]
            self.runs[group] = [run for _, run in keyed]

    def earlier(self, current: Sequence[Record]) -> Iterator[list[Record]]:
        """The runs of `current`'s group before it, latest first."""
        group = current[0].group
        before = bisect.bisect_left(self.keys.get(group, []), run_key(current))
        return reversed(self.runs.get(group, [])[:before])

    def previous(self, current: Sequence[Record], accept: Callable[[list[Record]], bool] = lambda _: True,
                 ) -> list[Record]:
        """The latest run of the same group before `current` that `accept`s (empty when there is none)."""
        return next((run for run in self.earlier(current) if accept(run)), [])


def previous_run(records: Sequence[Record], current: Sequence[Record]) -> list[Record]:
    """The run of the same group just before `current` (empty when there is none)."""
    return RunHistory(records).previous(current)
