"""Which records a report shows: load, filter, pick runs, find the baseline.

Everything here works on `Record`s only; errors that the user can fix name
the option (`--run`, `--baseline`, ...) and exit with code 2.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import click

from jax_benchmarks.errors import DataError
from jax_benchmarks.store.results import Record, SkippedLines, read_records

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

    def every_run(self) -> Filters:
        """The same groups and backends in every run (what a baseline or a history draws from)."""
        return Filters(group=self.group, backend=self.backend)


def figure_key(record: Record) -> FigureKey:
    return (record.group, record.case, record.backend, record.variant, record.device)


def load(path: Path, warn: Warn, skipped: SkippedLines | None = None) -> list[Record]:
    """Every record of `path`, index-only (`complete_records` reads in full those shown);
    no record at all is a data error (exit 2)."""
    records = list(read_records(path, warn, index_only=True, skipped=skipped))
    if not records:
        raise DataError(
            f"no benchmark records in {path}: run a benchmark first, e.g. `python main.py xla all`"
        )
    return records


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


def resolve_run(records: Sequence[Record], wanted: str, option: str) -> str:
    """The run id equal to `wanted`, or the only one starting with it."""
    runs = by_run(records)
    ids = sorted(runs, key=lambda rid: run_key(runs[rid]))
    if wanted in ids:
        return wanted
    matches = [rid for rid in ids if rid.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise click.BadParameter(
            f"{wanted!r} matches {len(matches)} runs ({', '.join(matches[:3])}, ...); give more of the id",
            param_hint=f"'{option}'",
        )
    latest = ", ".join(reversed(ids[-3:]))
    raise click.BadParameter(f"no run {wanted!r} in the results; latest runs: {latest}", param_hint=f"'{option}'")


def _require(records: list[Record], option: str, value: str, what: str, available: Iterable[str]) -> list[Record]:
    if not records:
        names = ", ".join(sorted(set(available))) or "none"
        raise click.BadParameter(f"no records for {what} {value!r}; available: {names}", param_hint=f"'{option}'")
    return records


def apply_filters(records: Sequence[Record], filters: Filters) -> list[Record]:
    """Records of the selected run (or all runs), group and backend; an empty selection is an error."""
    selected = list(records)
    if filters.run is not None:
        run_id = resolve_run(selected, filters.run, "--run")
        selected = [r for r in selected if r.run_id == run_id]
    if filters.group is not None:
        available = [r.group for r in selected]
        selected = _require([r for r in selected if r.group == filters.group],
                            "--group", filters.group, "group", available)
    if filters.backend is not None:
        available = [r.backend for r in selected]
        selected = _require([r for r in selected if r.backend == filters.backend],
                            "--backend", filters.backend, "backend", available)
    return selected


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


def is_path_like(value: str) -> bool:
    """A --baseline value that names a file rather than a run id."""
    return Path(value).exists() or "/" in value or value.endswith((".jsonl", ".json"))


def baseline_records(value: str, records: Sequence[Record], filters: Filters, warn: Warn,
                     skipped: SkippedLines | None = None) -> list[Record]:
    """Records of a baseline run id (in the results file) or of the latest runs in another file."""
    if is_path_like(value):
        path = Path(value)
        other = list(read_records(path, warn, index_only=True, skipped=skipped))
        if not other:
            raise click.BadParameter(f"no benchmark records in {path}", param_hint="'--baseline'")
        chosen = [r for run in latest_runs(other) for r in run]
    else:
        run_id = resolve_run(records, value, "--baseline")
        chosen = [r for r in records if r.run_id == run_id]
    return [
        r for r in chosen
        if (filters.group is None or r.group == filters.group)
        and (filters.backend is None or r.backend == filters.backend)
    ]
