"""The intermediate form every output format is rendered from.

A `ReportTable` is one run of one group: its cases (rows), its columns
(backend [variant] [@device], labelled by the core's `column_of`), and one
`FigureRow` per cell with the ratio to the case's fastest figure and, with a
baseline, the comparison. The layout is the core's `grid`, the same one the
rich `comparison_table` uses, so the table and the text formats always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from jax_benchmarks.measure import energy
from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.cli.tables import grid
from jax_benchmarks.report.compare import Comparison, compare, judge
from jax_benchmarks.report.select import FigureKey, figure_key
from jax_benchmarks.store.views import run_key

# Recorded with every figure by Run.record; the compile time is shown apart.
HIDDEN_METRICS = frozenset({"first_call_s"})
ENERGY_METRICS = frozenset({energy.PER_CALL, energy.PER_IMAGE, energy.STATUS})


@dataclass(frozen=True)
class FigureRow:
    group: str
    run_id: str
    case: str
    column: str
    record: Record
    ratio: float | None  # median / fastest median of the case; None when alone or untimed
    comparison: Comparison | None = None
    baseline_memory: dict[str, Scalar] | None = None  # the baseline figure's memory (report/memory_gate.py)
    # Each run's rounds' memory (this run's, then the baseline's): what repeats show of its noise (memory_gate.py).
    memory_repeats: tuple[tuple[dict[str, Scalar], ...], ...] = ()

    @property
    def fastest(self) -> bool:
        return self.ratio == 1.0


@dataclass(frozen=True)
class ReportTable:
    group: str
    run_id: str
    timestamp: str
    env: dict[str, Scalar]
    records: list[Record]  # as read, for the core's comparison_table
    cases: list[str]
    columns: list[str]
    rows: list[FigureRow]
    metric_names: list[str]
    baseline_note: str | None = None  # e.g. "vs run X" or why there is no comparison
    unmatched: int = 0  # figures with no counterpart in the baseline

    @property
    def row_metrics(self) -> list[str]:
        """The metrics drawn as rows under their case: all but the energy, which the case's memory rows show
        beside the device's memory (cli/tables.py memory_rows); the CSV and JSON keep every metric."""
        return [m for m in self.metric_names if m not in ENERGY_METRICS]

    @property
    def title(self) -> str:
        quick = " · --quick sizes: a smoke test, not a result" if self.env.get("quick") else ""
        return f"{self.group} · run {self.run_id} · {self.timestamp}{quick}"

    def cell(self, case: str, column: str) -> FigureRow | None:
        for row in self.rows:
            if row.case == case and row.column == column:
                return row
        return None

    @property
    def compared(self) -> list[FigureRow]:
        return [row for row in self.rows if row.comparison is not None]


def build_table(records: Sequence[Record], baseline: Sequence[Record] | None = None,
                baseline_note: str | None = None) -> ReportTable:
    """One table from the records of one run of one group (and an optional baseline)."""
    layout = grid(records)
    # Every record of a figure: with --rounds, one per round (the grid shows the latest).
    base: dict[FigureKey, list[Record]] = {}
    for r in baseline or ():
        base.setdefault(figure_key(r), []).append(r)
    rounds: dict[FigureKey, list[Record]] = {}
    for r in records:
        rounds.setdefault(figure_key(r), []).append(r)
    rows: list[FigureRow] = []
    unmatched = 0
    for case in layout.cases:
        for column in layout.columns:
            record = layout.cells.get((case, column))
            if record is None:
                continue
            comparison = None
            counterpart = base.get(figure_key(record))
            if baseline is not None and record.median_s:
                comparison = compare(rounds[figure_key(record)], counterpart) if counterpart else None
                unmatched += comparison is None
            rows.append(FigureRow(record.group, record.run_id, case, column, record,
                                  layout.ratio(case, column), comparison,
                                  dict(counterpart[-1].memory) if counterpart else None,
                                  tuple(tuple(dict(r.memory) for r in side if r.memory)
                                        for side in (rounds[figure_key(record)], counterpart or ()))))
    metric_names = sorted({m for r in records for m in r.metrics} - HIDDEN_METRICS)
    latest = max(records, key=lambda r: r.timestamp)
    return ReportTable(
        group=records[0].group, run_id=records[0].run_id, timestamp=run_key(records)[0],
        env=dict(latest.env), records=list(records), cases=layout.cases, columns=layout.columns, rows=rows,
        metric_names=metric_names, baseline_note=baseline_note, unmatched=unmatched,
    )


def judge_tables(tables: Sequence[ReportTable], threshold_pct: float) -> list[ReportTable]:
    """Every compared figure of the report judged as one family (Benjamini–Hochberg) against ±threshold_pct."""
    compared = [(t, row) for t in tables for row in t.rows if row.comparison is not None]
    verdicts = iter(judge([row.comparison for _, row in compared if row.comparison is not None], threshold_pct))
    judged = {id(row): replace(row, comparison=next(verdicts)) for _, row in compared}
    return [replace(t, rows=[judged.get(id(row), row) for row in t.rows]) for t in tables]


def order_tables(tables: list[ReportTable], group_order: Sequence[str]) -> list[ReportTable]:
    """Groups in the CLI's order (unknown groups after, by name), runs oldest first."""
    rank = {name: i for i, name in enumerate(group_order)}
    return sorted(tables, key=lambda t: (rank.get(t.group, len(rank)), t.group, t.timestamp, t.run_id))
