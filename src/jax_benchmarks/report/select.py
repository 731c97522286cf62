"""Which records a report shows: the runs it picks from the results store, the filters, the baseline.

The store answers each question with the records it shows (src/jax_benchmarks/store/views.py), never its
whole history; errors that the user can fix name the option (`--run`, `--baseline`, ...) and exit with code 2.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from jax_benchmarks.errors import DataError, NoResultsYet
from jax_benchmarks.store.location import ResultsLocation, looks_like_url, open_store, store_errors
from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.store.sql import StoreError
from jax_benchmarks.store.views import ResultsStore, split_runs

Warn = Callable[[str], None]
# A figure is "the same" in two runs when all of these agree (the dtype and the
# size are part of the case name).
FigureKey = tuple[str, str, str, str | None, str]
PREVIOUS = "previous"


@dataclass(frozen=True)
class Filters:
    run: str | None = None
    group: str | None = None
    backend: str | None = None


def figure_key(record: Record) -> FigureKey:
    return (record.group, record.case, record.backend, record.variant, record.device)


def require_records(store: ResultsStore) -> None:
    """No record at all is a data error (exit 2)."""
    if store.is_empty():
        raise NoResultsYet(f"no benchmark records in {store.location}")


def resolve_run(store: ResultsStore, wanted: str, option: str) -> str:
    """The run id equal to `wanted`, or the only one starting with it."""
    matches = store.run_ids(wanted)
    if wanted in matches:
        return wanted
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise click.BadParameter(
            f"{wanted!r} matches {len(matches)} runs ({', '.join(matches[:3])}, ...); give more of the id",
            param_hint=f"'{option}'",
        )
    latest = ", ".join(store.latest_run_ids(3))
    raise click.BadParameter(f"no run {wanted!r} in the results; latest runs: {latest}", param_hint=f"'{option}'")


def _require(found: bool, option: str, value: str, what: str, available: Iterable[str]) -> None:
    if not found:
        names = ", ".join(sorted(set(available))) or "none"
        raise click.BadParameter(f"no records for {what} {value!r}; available: {names}", param_hint=f"'{option}'")


def check_filters(store: ResultsStore, filters: Filters) -> None:
    """--group and --backend name a group and a backend the store holds records of (else exit 2)."""
    if filters.group is not None:
        groups = store.groups(None)
        _require(filters.group in groups, "--group", filters.group, "group", groups)
    if filters.backend is not None:
        backends = store.backends(filters.group)
        _require(filters.backend in backends, "--backend", filters.backend, "backend", backends)


def apply_filters(records: Sequence[Record], filters: Filters) -> list[Record]:
    """The records of the selected group and backend among those of one run; an empty selection is an error."""
    selected = list(records)
    if filters.group is not None:
        available = [r.group for r in selected]
        selected = [r for r in selected if r.group == filters.group]
        _require(bool(selected), "--group", filters.group, "group", available)
    if filters.backend is not None:
        available = [r.backend for r in selected]
        selected = [r for r in selected if r.backend == filters.backend]
        _require(bool(selected), "--backend", filters.backend, "backend", available)
    return selected


def chosen_runs(store: ResultsStore, filters: Filters) -> list[list[Record]]:
    """The runs a report shows: the one given by --run (one list per group), else each group's latest."""
    if filters.run is not None:
        run_id = resolve_run(store, filters.run, "--run")
        return split_runs(apply_filters(store.run_records(run_id), filters))
    check_filters(store, filters)
    groups = [filters.group] if filters.group is not None else store.groups(filters.backend)
    return [run for group in groups if (run := store.latest_run(group, filters.backend))]


@dataclass(frozen=True)
class Previous:
    """`--baseline previous` for one run: the records it takes (empty where none), whether the group has any earlier
    run at all, and the latest earlier run on this machine it passed over for other settings, with what differs."""

    records: list[Record]
    any_earlier: bool
    passed_over: tuple[str, list[str]] | None = None


def previous_on_machine(store: ResultsStore, current: Sequence[Record], backend: str | None,
                        same_machine: Callable[[Mapping[str, Scalar], Mapping[str, Scalar]], bool],
                        other_settings: Callable[[Mapping[str, Scalar], Mapping[str, Scalar]], list[str]],
                        ) -> Previous:
    """The latest run of `current`'s group before it measured on the same machine with the same settings
    (`other_settings(now, then)` lists what differs: a run of other threads, sizes or presets measures something
    else, so it is passed over, never taken quietly)."""
    now = current[-1].env
    any_earlier = False
    passed_over: tuple[str, list[str]] | None = None
    for env, read in store.earlier_runs(current, backend):
        any_earlier = True
        if not same_machine(env, now):
            continue
        differ = other_settings(now, env)
        if differ:
            if passed_over is None and (records := read()):
                passed_over = (records[0].run_id, differ)
            continue
        if records := read():
            return Previous(records, True, passed_over)
    return Previous([], any_earlier, passed_over)


def is_path_like(value: str) -> bool:
    """A --baseline value that names a results store (a file or a database URL) rather than a run id."""
    return (Path(value).exists() or "/" in value or looks_like_url(value)
            or value.endswith((".jsonl", ".json", ".sqlite", ".db")))


def baseline_records(value: str, store: ResultsStore, filters: Filters, warn: Warn,
                     lock_timeout_s: float | None = None) -> list[Record]:
    """Records of a baseline run id (in the results store) or of the latest runs in another store (read waiting up
    to `lock_timeout_s` for a lock, --lock-timeout; None: the default)."""
    if is_path_like(value):
        try:
            where = ResultsLocation(value) if lock_timeout_s is None else ResultsLocation(value, lock_timeout_s)
            other = open_store(where, create=False, log=warn)
        except (StoreError, ValueError) as exc:
            raise click.BadParameter(str(exc), param_hint="'--baseline'") from None
        try:
            with store_errors(other):  # a driver's error (a lock timeout, a server gone): one line naming the store
                if other.is_empty():
                    raise click.BadParameter(f"no benchmark records in {other.location}", param_hint="'--baseline'")
                chosen = [r for group in other.groups(None) for r in other.latest_run(group, None)]
            for summary in other.warnings():
                warn(summary)
        finally:
            other.close()
    else:
        chosen = store.run_records(resolve_run(store, value, "--baseline"))
    return [
        r for r in chosen
        if (filters.group is None or r.group == filters.group)
        and (filters.backend is None or r.backend == filters.backend)
    ]
