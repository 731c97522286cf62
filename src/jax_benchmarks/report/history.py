"""`report --history`: every figure over the runs of the results file, as asv draws it.

Each run is labelled by what could explain a change: its date, its git commit
and the versions of the libraries that differ between the runs shown (read
from the `env` every record carries). So "did jax 0.10 → 0.11 make my training
step slower?" is one row of the table or one line of the chart.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.cli.tables import BUSY_WORD, column_of, format_seconds, is_busy
from jax_benchmarks.store.views import by_group, by_run, run_key



def version_keys() -> tuple[str, ...]:
    """Environment fields that label a run when they change between runs (in this order): the commit, Python,
    every framework's distributions and the variables it reads when it loads (XLA_FLAGS), from their descriptors
    (jax_benchmarks.frameworks.descriptors)."""
    # Imported here: the descriptors load the measurement core (rich among it), which `--help` must not.
    from jax_benchmarks.frameworks.descriptors import variable_keys, version_keys as framework_version_keys

    return ("git_commit", "python", *framework_version_keys(), *variable_keys())

SHORT_COMMIT = 7


@dataclass(frozen=True)
class RunInfo:
    run_id: str
    timestamp: str
    env: dict[str, Scalar]


@dataclass(frozen=True)
class Series:
    """One figure (case and column) across runs: run id -> its record in that run."""

    case: str
    column: str
    points: dict[str, Record]

    @property
    def name(self) -> str:
        return f"{self.case} · {self.column}"


@dataclass(frozen=True)
class GroupHistory:
    group: str
    runs: list[RunInfo]  # oldest first
    series: list[Series]
    varying: list[str]  # version_keys() whose value changes between the runs

    def label_parts(self, run: RunInfo) -> list[str]:
        """['2025-01-02 10:00', '0123456', 'jax 0.10.2']: date, commit, and the versions that vary."""
        parts = [run.timestamp[:16].replace("T", " ")]
        commit = run.env.get("git_commit")
        parts.append(str(commit)[:SHORT_COMMIT] + ("-dirty" if str(commit).endswith("-dirty") else "")
                     if commit else "no commit")
        parts += [f"{key} {run.env.get(key) or '—'}" for key in self.varying if key != "git_commit"]
        return parts

    def label(self, run: RunInfo, sep: str = " · ") -> str:
        return sep.join(self.label_parts(run))

    @property
    def legend(self) -> str:
        libraries = [k for k in self.varying if k != "git_commit"]
        changed = (f"versions that change between these runs: {', '.join(libraries)}" if libraries
                   else "the same library versions in every run")
        return (f"runs labelled by date and git commit; {changed}. Cells: median per call "
                "(~ noisy; busy: taken on a busy machine); last column: the latest run against the first, "
                "not compared where either was busy.")


def run_infos(records: Sequence[Record]) -> list[RunInfo]:
    """The runs of `records`, oldest first, each with the environment of its latest record."""
    runs = sorted(by_run(records).values(), key=run_key)
    return [RunInfo(run[0].run_id, run_key(run)[0], dict(max(run, key=lambda r: r.timestamp).env))
            for run in runs]


def varying_keys(runs: Sequence[RunInfo]) -> list[str]:
    return [key for key in version_keys() if len({repr(run.env.get(key)) for run in runs}) > 1]


def group_history(records: Sequence[Record]) -> GroupHistory:
    """The history of one group's records (every run of the group)."""
    timed = [r for r in records if r.median_s]
    show_device = len({r.device for r in timed}) > 1
    runs = run_infos(records)
    series: dict[tuple[str, str], Series] = {}
    for record in sorted(timed, key=lambda r: r.timestamp):
        key = (record.case, column_of(record, show_device))
        entry = series.setdefault(key, Series(key[0], key[1], {}))
        entry.points[record.run_id] = record  # a later record of the same cell wins, as in the tables
    return GroupHistory(records[0].group, runs, list(series.values()), varying_keys(runs))


def build_histories(records: Sequence[Record], group_order: Sequence[str]) -> list[GroupHistory]:
    """One history per group, groups in the CLI's order (unknown groups after, by name)."""
    rank = {name: i for i, name in enumerate(group_order)}
    groups = sorted(by_group(records).items(), key=lambda item: (rank.get(item[0], len(rank)), item[0]))
    return [group_history(group_records) for _, group_records in groups]


def change_text(series: Series, runs: Sequence[RunInfo]) -> str:
    """Latest median against the first one, in percent; '—' with fewer than two runs; 'busy' where either was
    taken on a busy machine (a change between them is not printed)."""
    timed = [record for run in runs if (record := series.points.get(run.run_id)) is not None and record.median_s]
    if len(timed) < 2:
        return "—"
    first, last = timed[0], timed[-1]
    if is_busy(first) or is_busy(last):
        return BUSY_WORD
    assert first.median_s and last.median_s
    return f"{(last.median_s - first.median_s) / first.median_s * 100:+.1f} %"


def point_text(record: Record | None) -> str:
    if record is None or not record.median_s:
        return "—"
    return (format_seconds(record.median_s) + (" ~" if record.noisy else "")
            + (f" {BUSY_WORD}" if is_busy(record) else ""))


def history_headers(history: GroupHistory, sep: str = " · ") -> list[str]:
    return ["figure", *(history.label(run, sep) for run in history.runs), "last vs first"]


def history_cells(history: GroupHistory, runs: Sequence[RunInfo] | None = None) -> list[list[str]]:
    """One row per figure: its name, its median in every run shown (`runs`, default: every run), and the
    change over every run."""
    shown = history.runs if runs is None else runs
    return [
        [s.name, *(point_text(s.points.get(run.run_id)) for run in shown),
         change_text(s, history.runs)]
        for s in history.series
    ]


def quartiles(record: Record) -> tuple[float, float]:
    """(Q1, Q3) of the raw samples; median ± IQR/2 when fewer than two samples were kept."""
    median = record.median_s or 0.0
    if len(record.samples_s) >= 2:
        q1, _, q3 = statistics.quantiles(record.samples_s, n=4, method="inclusive")
        return q1, q3
    half = (record.iqr_s or 0.0) / 2
    return median - half, median + half


def history_rows(history: GroupHistory) -> list[dict[str, object]]:
    """Long form for CSV and JSON: one row per figure and run."""
    labels = {run.run_id: history.label(run) for run in history.runs}
    return [
        {"group": history.group, "case": s.case, "column": s.column, "run_id": run_id,
         "timestamp": rec.timestamp, "label": labels.get(run_id, run_id),
         "git_commit": rec.env.get("git_commit"), "median_s": rec.median_s, "iqr_s": rec.iqr_s,
         "noisy": rec.noisy, "busy": is_busy(rec), **{f"env.{k}": rec.env.get(k) for k in history.varying if k != "git_commit"}}
        for s in history.series for run_id, rec in s.points.items()
    ]
