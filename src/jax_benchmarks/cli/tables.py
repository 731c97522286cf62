"""Rich tables of records: rows = cases, columns = backends (one code path for all groups)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rich.table import Table

from jax_benchmarks.cli.console import literal
from jax_benchmarks.measure.contention import busy_line, of_fields, unknown_line
from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.store.record import Record, Scalar


def format_seconds(seconds: float) -> str:
    """Three significant digits in the largest unit that keeps the number ≥ 1."""
    if seconds == 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        # 0.9995 rather than 1: a value that rounds up to 1.00 belongs to this unit.
        if seconds >= 0.9995 * scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


NOISY_NOTE = "~ noisy: IQR above 10 % of the median"
BUSY_MARK = "!"


def is_busy(record: Record) -> bool:
    """Taken while other processes held the machine (jax_benchmarks.measure.contention)."""
    return record.contention.get("busy") is True


def contention_notes(records: Sequence[Record]) -> list[str]:
    """The lines under a table on contention: which figures were taken on a busy machine ('!') and at
    worst how busy, and those whose contention could not be told (and why); none on a quiet machine."""
    seen = [c for r in records if r.median_s and (c := of_fields(r.contention)) is not None]
    busy = busy_line(seen)
    return [line for line in (busy and f"{BUSY_MARK} {busy}", unknown_line(seen)) if line]


def timing_cell(record: Record, ratio: float | None, *, markup: bool) -> str:
    """One figure's cell, the same in every table: '1.2 ms ± 30 µs ×2.00 ~' (median ± IQR, the ratio to the
    case's fastest figure or '(fastest)', '~' when noisy, '!' when taken on a busy machine); `markup` adds rich's colours for the terminal."""
    if not record.median_s:
        return "—"
    text = f"{format_seconds(record.median_s)} ± {format_seconds(record.iqr_s or 0.0)}"
    if ratio is not None:
        fastest = "(fastest)"
        text += f" [bold green]{fastest}[/]" if markup and ratio == 1.0 else (
            f" {fastest}" if ratio == 1.0 else f" ×{ratio:.2f}")
    if record.noisy:
        text += " [yellow]~[/]" if markup else " ~"
    if is_busy(record):
        text += f" [bold red]{BUSY_MARK}[/]" if markup else f" {BUSY_MARK}"
    return text


def format_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _bytes(memory: Mapping[str, Scalar], key: str) -> int | None:
    value = memory.get(key)
    return value if type(value) is int else None


def host_peak_cell(memory: Mapping[str, Scalar]) -> str | None:
    peak = _bytes(memory, "host_peak_bytes")
    return None if peak is None else format_bytes(peak)


def device_peak_cell(memory: Mapping[str, Scalar]) -> str | None:
    """In use at the peak, and what the allocator reserved beside it: '1.2 GiB (reserved 2.0 GiB)'."""
    peak, reserved = _bytes(memory, "device_peak_bytes"), _bytes(memory, "device_reserved_bytes")
    if peak is None:
        return None
    return format_bytes(peak) + ("" if reserved is None else f" (reserved {format_bytes(reserved)})")


def compiled_cell(memory: Mapping[str, Scalar]) -> str | None:
    """XLA's analysis of the compiled program: its temporaries, then arguments + outputs."""
    temp = _bytes(memory, "compiled_temp_bytes")
    if temp is None:
        return None
    io_bytes = (_bytes(memory, "compiled_argument_bytes") or 0) + (_bytes(memory, "compiled_output_bytes") or 0)
    return f"{format_bytes(temp)} temp · {format_bytes(io_bytes)} in+out"


# The memory rows of every table, each under its case: (row label, the cell of a record's `memory`).
MEMORY_ROWS: tuple[tuple[str, Callable[[Mapping[str, Scalar]], str | None]], ...] = (
    ("host peak", host_peak_cell),
    ("device peak", device_peak_cell),
    ("compiled", compiled_cell),
)
MEMORY_NOTE = ("memory: peak above what the process (device) held before the case, taken apart from the timing; "
               "compiled = XLA's memory analysis of the program")


def memory_rows(case: str, records: Sequence[Record | None]) -> list[list[str]]:
    """The memory rows of a case across the columns ('—' where a column has no such figure)."""
    rows = []
    for name, cell in MEMORY_ROWS:
        values = [None if record is None else cell(record.memory) for record in records]
        if any(v is not None for v in values):
            rows.append([f"{case} · {name}", *("—" if v is None else v for v in values)])
    return rows


def column_of(record: Record, show_device: bool) -> str:
    """Column label: backend, its variant (e.g. jit/eager) and, when mixed, the device."""
    label = record.backend
    if record.variant:
        label += f" {record.variant}"
    if show_device:
        label += f" @{record.device}"
    return label


@dataclass(frozen=True)
class Grid:
    """Records laid out as rows = cases and columns = backend [variant] [@device].

    The one layout every rendering uses (the rich table here, the report's
    markdown, CSV, JSON and charts): a later record of the same cell wins, and
    the device joins the label only when timed figures come from several.
    """

    cases: list[str]
    columns: list[str]
    cells: dict[tuple[str, str], Record]

    def ratio(self, case: str, column: str) -> float | None:
        """Median over the case's fastest median; None unless two or more figures are timed."""
        record = self.cells.get((case, column))
        timed = [r.median_s for (c, _), r in self.cells.items() if c == case and r.median_s]
        if record is None or not record.median_s or len(timed) < 2:
            return None
        return record.median_s / min(timed)


def grid(records: Sequence[Record]) -> Grid:
    show_device = len({r.device for r in records if r.median_s is not None}) > 1
    cells: dict[tuple[str, str], Record] = {}
    for record in records:
        cells[(record.case, column_of(record, show_device))] = record  # a later record wins
    return Grid(
        cases=list(dict.fromkeys(case for case, _ in cells)),
        columns=list(dict.fromkeys(column for _, column in cells)),
        cells=cells,
    )


def comparison_table(
    records: Sequence[Record],
    title: str,
    metric_rows: Sequence[str] = (),
) -> Table:
    """Median ± IQR per case and backend, the ratio to the row's fastest, and metric rows. Every name in it
    (title, cases, columns, text metrics) is printed literally: it may come from a results file."""
    # A record with nothing to show in a cell (e.g. a parity record: its figures
    # are in `checks`) gets no column.
    layout = grid([r for r in records if r.median_s is not None or any(m in r.metrics for m in metric_rows)])
    cells = layout.cells

    table = Table(title=literal(title), title_justify="left")
    table.add_column("case")
    for col in layout.columns:
        table.add_column(literal(col), justify="right")

    noisy_seen = memory_seen = False
    for case in layout.cases:
        if any(r.median_s for (c, _), r in cells.items() if c == case):
            row = [literal(case)]
            for col in layout.columns:
                rec = cells.get((case, col))
                if rec is None:
                    row.append("—")
                    continue
                row.append(timing_cell(rec, layout.ratio(case, col), markup=True))
                noisy_seen = noisy_seen or (bool(rec.median_s) and rec.noisy)
            table.add_row(*row)
        for metric in metric_rows:
            values = [cells[(case, c)].metrics.get(metric) if (case, c) in cells else None for c in layout.columns]
            if any(v is not None for v in values):
                table.add_row(literal(f"{case} · {metric}"),
                              *("—" if v is None else literal(format_value(v)) for v in values))
        for memory_row in memory_rows(case, [cells.get((case, c)) for c in layout.columns]):
            table.add_row(*(literal(cell) for cell in memory_row), style="dim")
            memory_seen = True
    notes = [note for note, seen in ((NOISY_NOTE, noisy_seen), (MEMORY_NOTE, memory_seen)) if seen]
    table.caption = "\n".join(literal(note) for note in [*notes, *contention_notes(list(cells.values()))]) or None
    return table
