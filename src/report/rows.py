"""The intermediate form every output format is rendered from.

A `ReportTable` is one run of one group: its cases (rows), its columns
(backend [variant] [@device], labelled by the core's `column_of`), and one
`FigureRow` per cell with the ratio to the case's fastest figure and, with a
baseline, the comparison. The rules match `src.core.tables.comparison_table`
(a later record of the same cell wins; the ratio only when several figures
share a case), so the rich table and the text formats always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from src.core.results import Record, Scalar
from src.core.tables import column_of
from src.report.compare import Comparison, compare
from src.report.select import FigureKey, figure_key, run_key

# Recorded with every figure by Run.record; the compile time is shown apart.
HIDDEN_METRICS = frozenset({"first_call_s"})


@dataclass(frozen=True)
class FigureRow:
    group: str
    run_id: str
    case: str
    column: str
    record: Record
    ratio: float | None  # median / fastest median of the case; None when alone or untimed
    comparison: Comparison | None = None

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
    def title(self) -> str:
        return f"{self.group} · run {self.run_id} · {self.timestamp}"

    def cell(self, case: str, column: str) -> FigureRow | None:
        for row in self.rows:
            if row.case == case and row.column == column:
                return row
        return None

    @property
    def compared(self) -> list[FigureRow]:
        return [row for row in self.rows if row.comparison is not None]


def latest_cells(records: Sequence[Record], show_device: bool) -> dict[tuple[str, str], Record]:
    cells: dict[tuple[str, str], Record] = {}
    for record in records:
        cells[(record.case, column_of(record, show_device))] = record  # later wins
    return cells


def ratios(cells: dict[tuple[str, str], Record], case: str) -> dict[str, float]:
    """Ratio to the fastest figure of `case`, per column; empty when fewer than two are timed."""
    timed = {col: rec.median_s for (c, col), rec in cells.items() if c == case and rec.median_s}
    if len(timed) < 2:
        return {}
    fastest = min(timed.values())
    return {col: median / fastest for col, median in timed.items()}


def build_table(records: Sequence[Record], baseline: Sequence[Record] | None = None,
                baseline_note: str | None = None) -> ReportTable:
    """One table from the records of one run of one group (and an optional baseline)."""
    show_device = len({r.device for r in records}) > 1
    cases = list(dict.fromkeys(r.case for r in records))
    columns = list(dict.fromkeys(column_of(r, show_device) for r in records))
    cells = latest_cells(records, show_device)
    base: dict[FigureKey, Record] = {figure_key(r): r for r in baseline or ()}
    rows: list[FigureRow] = []
    unmatched = 0
    for case in cases:
        case_ratios = ratios(cells, case)
        for column in columns:
            record = cells.get((case, column))
            if record is None:
                continue
            comparison = None
            if baseline is not None and record.median_s:
                counterpart = base.get(figure_key(record))
                comparison = compare(record, counterpart) if counterpart is not None else None
                unmatched += comparison is None
            rows.append(FigureRow(record.group, record.run_id, case, column, record,
                                  case_ratios.get(column), comparison))
    metric_names = sorted({m for r in records for m in r.metrics} - HIDDEN_METRICS)
    latest = max(records, key=lambda r: r.timestamp)
    return ReportTable(
        group=records[0].group, run_id=records[0].run_id, timestamp=run_key(records)[0],
        env=dict(latest.env), records=list(records), cases=cases, columns=columns, rows=rows,
        metric_names=metric_names, baseline_note=baseline_note, unmatched=unmatched,
    )


def order_tables(tables: list[ReportTable], group_order: Sequence[str]) -> list[ReportTable]:
    """Groups in the CLI's order (unknown groups after, by name), runs oldest first."""
    rank = {name: i for i, name in enumerate(group_order)}
    return sorted(tables, key=lambda t: (rank.get(t.group, len(rank)), t.group, t.timestamp, t.run_id))
