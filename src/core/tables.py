"""Rich tables of records: rows = cases, columns = backends (one code path for all groups)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from src.core.results import Record


def format_seconds(seconds: float) -> str:
    """Three significant digits in the largest unit that keeps the number ≥ 1."""
    if seconds == 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        # 0.9995 rather than 1: a value that rounds up to 1.00 belongs to this unit.
        if seconds >= 0.9995 * scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def column_of(record: Record, show_device: bool) -> str:
    """Column label: backend, its variant (e.g. jit/eager) and, when mixed, the device."""
    label = record.backend
    if record.variant:
        label += f" {record.variant}"
    if show_device:
        label += f" @{record.device}"
    return label


def comparison_table(
    records: Sequence[Record],
    title: str,
    metric_rows: Sequence[str] = (),
) -> Table:
    """Median ± IQR per case and backend, the ratio to the row's fastest, and metric rows."""
    show_device = len({r.device for r in records if r.median_s is not None}) > 1
    columns: list[str] = []
    rows: list[str] = []
    cells: dict[tuple[str, str], Record] = {}
    for record in records:
        if record.median_s is None and not any(m in record.metrics for m in metric_rows):
            continue  # nothing to show in a cell (e.g. a parity record: its figures are in `checks`)
        col = column_of(record, show_device)
        if col not in columns:
            columns.append(col)
        if record.case not in rows:
            rows.append(record.case)
        cells[(record.case, col)] = record  # a later record of the same cell wins

    table = Table(title=title, title_justify="left")
    table.add_column("case")
    for col in columns:
        table.add_column(col, justify="right")

    noisy_seen = False
    for case in rows:
        timed = {c: cells[(case, c)] for c in columns if (case, c) in cells and cells[(case, c)].median_s}
        if timed:
            fastest = min(r.median_s or 0.0 for r in timed.values())
            row = [case]
            for col in columns:
                rec = timed.get(col)
                if rec is None or rec.median_s is None:
                    row.append("—")
                    continue
                text = f"{format_seconds(rec.median_s)} ± {format_seconds(rec.iqr_s or 0.0)}"
                if len(timed) > 1:
                    ratio = rec.median_s / fastest
                    text += " [bold green](fastest)[/]" if ratio == 1.0 else f" ×{ratio:.2f}"
                if rec.noisy:
                    text += " [yellow]~[/]"
                    noisy_seen = True
                row.append(text)
            table.add_row(*row)
        for metric in metric_rows:
            values = [cells[(case, c)].metrics.get(metric) if (case, c) in cells else None for c in columns]
            if any(v is not None for v in values):
                table.add_row(f"{case} · {metric}", *("—" if v is None else format_value(v) for v in values))
    if noisy_seen:
        table.caption = "~ noisy: IQR above 10 % of the median"
    return table
