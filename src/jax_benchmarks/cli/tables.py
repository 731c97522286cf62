"""Rich tables of records: rows = cases, columns = backends (one code path for all groups)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from jax_benchmarks.cli.console import literal, visible
from jax_benchmarks.measure.contention import busy_fields, busy_line, of_fields, unknown_line
from jax_benchmarks.measure import energy
from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.measure.oversubscription import contention_threads_line
from jax_benchmarks.measure.rounds import FigureSpread
from jax_benchmarks.store.record import Record, Scalar, of_operation


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
# The word a figure taken on a busy machine shows where a quiet one shows its rank (×N, fastest): it is not ranked.
BUSY_WORD = "busy"


def is_busy(record: Record) -> bool:
    """Taken while other processes held the machine (jax_benchmarks.measure.contention)."""
    return busy_fields(record.contention)


def contention_notes(records: Sequence[Record]) -> list[str]:
    """The lines under a table on contention: which figures were taken on a busy machine ('busy', never ranked)
    and at worst how busy, and those whose contention could not be told (and why); none on a quiet machine."""
    seen = [c for r in records if r.median_s and (c := of_fields(r.contention)) is not None]
    busy = busy_line(seen)
    busy = busy and f"{BUSY_WORD}: {busy}; a busy figure is not ranked (no ×N, no fastest)"
    return [line for line in (busy, contention_threads_line(records), unknown_line(seen)) if line]


def timing_pieces(record: Record, ratio: float | None) -> list[tuple[str, str]]:
    """One figure's cell as the pieces a line never breaks within, each with its rich style: the median ± IQR,
    then its rank (the ratio to the case's fastest quiet figure, '(fastest)', or 'busy' where it was taken on
    a busy machine and is not ranked), then '~' when noisy."""
    if not record.median_s:
        return [("—", "")]
    pieces = [(f"{format_seconds(record.median_s)} ± {format_seconds(record.iqr_s or 0.0)}", "")]
    if is_busy(record):
        pieces.append((BUSY_WORD, "bold red"))
    elif ratio is not None:
        pieces.append(("(fastest)", "bold green") if ratio == 1.0 else (f"×{ratio:.2f}", ""))
    if record.noisy:
        pieces.append(("~", "yellow"))
    return pieces


def timing_cell(record: Record, ratio: float | None) -> str:
    """One figure's cell as text, the same in every format: '1.2 ms ± 30 µs ×2.00 ~' (`timing_pieces`)."""
    return " ".join(text for text, _ in timing_pieces(record, ratio))


@dataclass(frozen=True)
class Pieces:
    """A cell that wraps only between its pieces (a figure and its unit, '29.8 ms ± 356 µs', stay on one line),
    justified as its column is. Rich measures it by its widest piece and its one-line length."""

    pieces: tuple[tuple[str, str], ...]  # (text, rich style); the text printed literally

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widths = [cell_len(visible(text)) for text, _ in self.pieces]
        return Measurement(max(widths, default=0), sum(widths) + max(len(widths) - 1, 0))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines: list[Text] = []
        for text, style in self.pieces:
            text = visible(text)
            if lines and lines[-1].cell_len + 1 + cell_len(text) <= options.max_width:
                lines[-1].append(" ")
                lines[-1].append(text, style)
            else:
                lines.append(Text(text, style))
        # Each line holds whole pieces already: rich only justifies them.
        yield Text("\n", justify=options.justify or "left", no_wrap=True).join(lines)

    @property
    def widest(self) -> int:
        return max((cell_len(visible(text)) for text, _ in self.pieces), default=0)


def pieces_of(text: str) -> Pieces:
    """A memory, change or history cell as `Pieces`: it breaks only after a ' · ' or ' … ', or before a ' (', a
    '~' or 'busy' (a number and its unit never apart: '89 MiB temp ·' / '54.9 MiB in+out')."""
    parts = re.split(rf"(?<= ·) | (?=\()|(?<= …) | (?=~)| (?={BUSY_WORD}\b)", text)
    return Pieces(tuple((part, "") for part in parts if part))


# Metrics that are the ratio of two of a case's figures of one backend (jit's speed-up over eager:
# measure/harness.py): not printed where either figure was taken on a busy machine.
RATIO_METRICS = frozenset({"speedup"})


def metric_texts(metric: str, records: Sequence[Record | None]) -> list[str | None]:
    """A metric row's cells across one case's records (None where a record has no such figure): the value, or
    'busy' for a ratio metric whose backend has a figure of the case taken on a busy machine."""
    busy = {record.backend for record in records if record is not None and is_busy(record)}
    return [None if record is None or (value := record.metrics.get(metric)) is None else
            BUSY_WORD if metric in RATIO_METRICS and record.backend in busy else format_value(value)
            for record in records]


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


def energy_cell(metrics: Mapping[str, Scalar]) -> str | None:
    """The energy of a GPU figure's timed calls (NVML's counter): '12.3 J/call · 96.1 mJ/image'; 'not measured' where
    the counter could not be read; None for a figure with no energy field (a CPU's)."""
    per_call, per_image = metrics.get(energy.PER_CALL), metrics.get(energy.PER_IMAGE)
    if isinstance(per_call, float):
        return f"{per_call:.3g} J/call" + (f" · {per_image * 1e3:.3g} mJ/image" if isinstance(per_image, float) else "")
    return energy.NOT_MEASURED if energy.STATUS in metrics else None


MEMORY_NOTE = ("memory: peak above what the process (device) held before the case, taken apart from the timing; "
               "compiled = XLA's memory analysis of the program")


ENERGY_NOTE = "energy: the GPU's energy counter (NVML) over the timed calls alone"


def memory_values(records: Sequence[Record | None]) -> list[tuple[str, list[str | None]]]:
    """A case's memory kinds that some column has, each with its figure per column (None: none there); then,
    beside the device's memory, the energy of its timed calls (a GPU's figures only)."""
    kinds: list[tuple[str, list[str | None]]] = []
    for name, cell in MEMORY_ROWS:
        values = [None if record is None else cell(record.memory) for record in records]
        if any(v is not None for v in values):
            kinds.append((name, values))
    spent = [None if record is None else energy_cell(record.metrics) for record in records]
    if any(v is not None for v in spent):
        kinds.append(("energy", spent))
    return kinds


def memory_rows(case: str, records: Sequence[Record | None]) -> list[list[str]]:
    """The memory rows of a case across the columns ('—' where a column has no such figure)."""
    return [[f"{case} · {name}", *("—" if v is None else v for v in values)] for name, values in memory_values(records)]


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
        """Median over the case's fastest quiet median; None unless two or more quiet figures are timed: a
        figure taken on a busy machine is never ranked, nor ranked against (`is_busy`)."""
        record = self.cells.get((case, column))
        timed = self.timed.get(case, [])
        if record is None or not record.median_s or is_busy(record) or len(timed) < 2:
            return None
        return record.median_s / min(timed)

    @cached_property
    def timed(self) -> dict[str, list[float]]:
        """Each case's timed medians taken on a quiet machine, in every column of the cells (a part of a table
        keeps them all); gathered once, not once a cell."""
        out: dict[str, list[float]] = {}
        for (case, _), record in self.cells.items():
            if record.median_s and not is_busy(record):
                out.setdefault(case, []).append(record.median_s)
        return out


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


# What each metric row measures, with its unit: a figure without one cannot be read.
METRIC_LABELS: Mapping[str, str] = {
    "gflops": "GFLOP/s", "residual": "residual max|C·C⁻¹ − I|", "items_per_s": "items/s",
    "speedup": "speed-up over eager (×)", "accuracy": "accuracy (0–1)", "images_per_s": "images/s",
    "peak_share": "share of the physical peak (0–1)",
    "loop_overhead": "loop overhead (epoch ÷ steps' time − 1)", "loss": "loss", "train_images": "training images",
    "test_images": "test images", "mean": "training pixel mean (0–1)",
    "std": "training pixel std (0–1)",  # mnist's: the pixels ÷ 255, the units it normalizes in (training/data/arrays.py)
    "first_call_s": "first call (s)", "recompiles_new_shape": "recompiles on a new shape",
    "max_rel_diff": "largest relative difference", "method": "method",
    energy.PER_CALL: "energy per timed call (J)", energy.PER_IMAGE: "energy per image (J)", energy.STATUS: "energy",
}
CELL_NOTE = "median ± IQR (the spread of the repeats; ± 0: too few repeats to spread); ×N: N times the row's fastest"


# mnist's (and jit flax's) cases keep two different figures under one metric name: an epoch's `accuracy` and `loss`
# are those of its training batches, taken as the model learns; a validation's are the test images'. The case's
# operation says which, in today's names (`train_epoch_128x28x28_float32`) and the first records' (`train_epoch`):
# records of every age read with the right label, none rewritten.
CASE_METRIC_LABELS: Mapping[tuple[str, str], str] = {
    ("train_epoch", "accuracy"): "training accuracy of the epoch (0–1)",
    ("train_epoch", "loss"): "training loss of the epoch",
    ("validation", "accuracy"): "test accuracy (0–1)",
    ("validation", "loss"): "test loss",
}


def metric_label(metric: str, case: str = "") -> str:
    """What a metric row of `case` measures, with its unit."""
    for (operation, name), label in CASE_METRIC_LABELS.items():
        if name == metric and of_operation(case, operation):
            return label
    return METRIC_LABELS.get(metric, metric.replace("_", " "))


Cell = Pieces | str  # a str cell is data: printed literally, wrapped between words


@dataclass(frozen=True)
class Sheet:
    """A table's content before it is laid out: blocks of rows, one block a case (or figure), each row a
    sub-label ('' for the case's own row, e.g. a metric or a memory kind) and a cell per column (None: none).

    It is laid out for the console's width (`Fitting`) in the first of three forms that fits, no name or figure
    ever cut or replaced by a number: `wide` (rows = cases, a column per backend), `stacked` (a row per case
    and backend: the backends' figures under each other) and `vertical` (each case's name on a line of its
    own, its backends' figures under it, no borders)."""

    title: str
    caption: str
    columns: list[str]
    blocks: list[tuple[str, list[tuple[str, list[Cell | None]]]]]
    kind_header: str | None = None  # a column of its own for the sub-labels (the memory table's "memory")
    value_header: str = "median ± IQR"  # the stacked form's figure column
    column_header: str = "backend"  # the stacked form's column of column labels
    name_header: str = "case"
    min_widths: Mapping[str, int] = field(default_factory=dict)  # a text column's narrowest in the wide form
    left: frozenset[str] = frozenset()  # the columns of words, justified left (figures are justified right)

    def label(self, case: str, rows: Sequence[tuple[str, Sequence[Cell | None]]], index: int) -> str:
        """The name column's text for row `index` of a case's `rows` (the timing tables' metric rows stand under
        their case's row; a case with metric rows only names itself on each of them)."""
        sub = rows[index][0]
        if self.kind_header is not None:
            return case if index == 0 else ""
        if not sub:
            return case
        return f"  · {sub}" if any(not other for other, _ in rows) else f"{case} · {sub}"

    def names_width(self) -> int:
        """The name column's least width: its longest case name, or its header (a longer row label, e.g. a
        metric's, wraps between its words where the console has no room for it)."""
        return max([len(self.name_header)] + [cell_len(visible(case)) for case, _ in self.blocks])

    def caption_markup(self) -> str:
        return "\n".join(literal(line) for line in self.caption.split("\n"))

    def widest_piece(self) -> int:
        """The least width of the cells' column in the stacked and vertical forms (`least`)."""
        return max((least(cell) for _, rows in self.blocks for _, cells in rows for cell in cells
                    if cell is not None), default=0)

    def kind_width(self) -> int:
        """The sub-label column's width: its longest sub-label (never cut), or its header."""
        return max([cell_len(self.kind_header or "")] + [cell_len(visible(sub)) for _, rows in self.blocks
                                                          for sub, _ in rows])

    def wide(self) -> Table:
        table = Table(title=literal(self.title), title_justify="left", caption=self.caption_markup() or None)
        table.add_column(self.name_header, min_width=self.names_width())
        if self.kind_header is not None:
            table.add_column(self.kind_header, no_wrap=True, min_width=self.kind_width())
        for index, column in enumerate(self.columns):
            widest = max((least(cell) for _, rows in self.blocks for _, cells in rows
                          if (cell := cells[index]) is not None), default=0)
            table.add_column(literal(column), justify="left" if column in self.left else "right",
                             min_width=max(widest, longest_word(column), self.min_widths.get(column, 0)))
        for case, rows in self.blocks:
            for index, (sub, cells) in enumerate(rows):
                shown = ["—" if cell is None else cell_of(cell) for cell in cells]
                if self.kind_header is not None:
                    table.add_row(literal(self.label(case, rows, index)), literal(sub), *shown)
                else:
                    table.add_row(literal(self.label(case, rows, index)), *shown)
        return table

    def stacked(self) -> Table:
        table = Table(title=literal(self.title), title_justify="left", caption=self.caption_markup() or None)
        table.add_column(self.name_header, min_width=self.names_width())
        if self.kind_header is not None:
            table.add_column(self.kind_header, no_wrap=True, min_width=self.kind_width())
        # A column's label names the row here: kept on one line.
        table.add_column(self.column_header, no_wrap=True,
                         min_width=max((cell_len(visible(c)) for c in self.columns), default=0))
        table.add_column(self.value_header, justify="right", min_width=self.widest_piece())
        for case, rows in self.blocks:
            for index, (sub, cells) in enumerate(rows):
                present = [(column, cell) for column, cell in zip(self.columns, cells) if cell is not None]
                for place, (column, cell) in enumerate(present):
                    label = literal(self.label(case, rows, index)) if place == 0 else ""
                    kind = [literal(sub) if place == 0 else ""] if self.kind_header is not None else []
                    table.add_row(label, *kind, literal(column), cell_of(cell))
            if table.rows:
                table.rows[-1].end_section = True
        return table

    def vertical(self) -> Group:
        """No borders: the title, then each case's name on a line of its own and its figures under it, indented
        ('  numpy  1.2 ms ± 30 µs ×2.00'; a sub-label on a line of its own, its figures under it), then the caption."""
        label_width = 4 + max((cell_len(visible(column)) for column in self.columns), default=0)
        parts: list[RenderableType] = [Text(visible(self.title), style="italic")]
        for case, rows in self.blocks:
            parts.append(Text(visible(case), style="bold"))
            for sub, cells in rows:
                if sub:
                    parts.append(Text(visible(f"  {'' if self.kind_header else '· '}{sub}")))
                figures = Table.grid(padding=(0, 1))
                figures.add_column(min_width=label_width)
                figures.add_column(min_width=self.widest_piece())
                for column, cell in zip(self.columns, cells):
                    if cell is not None:
                        figures.add_row(literal(f"{'    ' if sub else '  '}{column}"), cell_of(cell))
                parts.append(figures)
        parts += [Text(visible(line)) for line in self.caption.split("\n") if line]
        return Group(*parts)


def least(cell: Cell) -> int:
    """The narrowest a cell is printed whole: its widest piece, or a text's longest word (rich folds a longer one)."""
    return cell.widest if isinstance(cell, Pieces) else longest_word(cell)


def longest_word(text: str) -> int:
    return max((cell_len(visible(word)) for word in text.split()), default=0)


def cell_of(cell: Cell) -> RenderableType:
    return cell if isinstance(cell, Pieces) else literal(cell)


@dataclass(frozen=True)
class Fitting:
    """The first of some layouts (widest first) whose every line fits the console; where none does, the last
    one (a name or a figure wider than the console itself: the console crops it)."""

    layouts: Sequence[Callable[[], RenderableType]]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for make in self.layouts[:-1]:
            layout = make()
            if isinstance(layout, Table) and least_width(layout) > options.max_width:
                continue  # too wide even at its narrowest: rich need not lay it out
            lines = fitted(console, options, layout)
            if lines is None and isinstance(layout, Table):
                lines = fitted(console, options, with_widths(console, options, layout))
            if lines is not None:
                yield from lines
                return
        yield self.layouts[-1]()


def sheet_layouts(sheet: Sheet) -> Fitting:
    return Fitting((sheet.wide, sheet.stacked, sheet.vertical))


@dataclass(frozen=True)
class Tables:
    """The timing table of some records, then their memory table: each laid out when printed, for the console's
    width, in the first form that fits (`Sheet`): a case name is never cut nor numbered, a figure never split
    from its unit."""

    layout: Grid
    title: str
    metric_rows: Sequence[str]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield sheet_layouts(timing_sheet(self.layout, self.title, self.metric_rows))
        memory = memory_sheet(self.layout, self.title)
        if memory is not None:
            yield sheet_layouts(memory)


def least_width(table: Table) -> int:
    """A lower bound of `table`'s width, from its columns' fixed and least widths alone (no cell measured): rich
    lays no column out narrower than its min_width, plus its padding and its rule."""
    _, right, _, left = table.padding
    return 1 + sum((column.width or column.min_width or 0) + left + right + 1 for column in table.columns)


def with_widths(console: Console, options: ConsoleOptions, table: Table) -> Table:
    """`table` with each column's width fixed: its least width, and of what the console has beyond the sum of
    those, a share in proportion to what the column needs to print its cells on one line. Rich narrows the
    widest columns first and then widens those below their least width again, so that its own layout of a table
    that fits at its least widths can come out wider than the console."""
    _, right, _, left = table.padding
    spare = options.max_width - least_width(table)
    least = [column.width or column.min_width or 0 for column in table.columns]
    needs = [0 if column.width else
             max(0, max(Measurement.get(console, options, cell).maximum for cell in [column.header, *column.cells])
                 - least[index])
             for index, column in enumerate(table.columns)]
    total = sum(needs)
    for index, column in enumerate(table.columns):
        extra = min(needs[index], spare * needs[index] // total) if total else 0
        column.width = least[index] + extra
    return table


def fitted(console: Console, options: ConsoleOptions, renderable: RenderableType) -> list[Segment] | None:
    """`renderable` laid out by rich for the console's width (a table's columns shrunk, what wraps wrapped), as
    the segments to print, lines ended; None when a line is wider than the console: a console crops what is
    wider, and a column beyond the edge would vanish. Rich yields the lines one by one, a table's top border
    among the first (its widest line: the title wraps within it): a table too wide is given up there, its rows
    never laid out."""
    segments: list[Segment] = []
    for line in Segment.split_lines(console.render(renderable, options)):
        if Segment.get_line_length(line) > options.max_width:
            return None
        segments += (*line, Segment.line())
    return segments


def comparison_table(records: Sequence[Record], title: str, metric_rows: Sequence[str] = ()) -> Tables:
    """Median ± IQR per case and backend, the rank to the row's fastest quiet figure, and metric rows under their
    case; then the memory figures in a table of their own (see `Tables`). Every name in it (title, cases,
    columns, text metrics) is printed literally: it may come from a results file."""
    # A record with nothing to show in a cell (e.g. a parity record: its figures
    # are in `checks`) gets no column.
    layout = grid([r for r in records if r.median_s is not None or any(m in r.metrics for m in metric_rows)])
    return Tables(layout, title, tuple(metric_rows))


def timing_sheet(layout: Grid, title: str, metric_rows: Sequence[str]) -> Sheet:
    """A block per case: its timing row (where a figure is timed), then its metric rows."""
    cells = layout.cells
    blocks: list[tuple[str, list[tuple[str, list[Cell | None]]]]] = []
    noisy_seen = False
    for case in layout.cases:
        rows: list[tuple[str, list[Cell | None]]] = []
        if any(r.median_s for (c, _), r in cells.items() if c == case):
            row: list[Cell | None] = []
            for col in layout.columns:
                rec = cells.get((case, col))
                row.append(None if rec is None else Pieces(tuple(timing_pieces(rec, layout.ratio(case, col)))))
                noisy_seen = noisy_seen or (rec is not None and bool(rec.median_s) and rec.noisy)
            rows.append(("", row))
        for metric in metric_rows:
            values = metric_texts(metric, [cells.get((case, c)) for c in layout.columns])
            if any(v is not None for v in values):
                rows.append((metric_label(metric, case), list(values)))
        if rows:
            blocks.append((case, rows))
    caption = "\n".join([CELL_NOTE, *([NOISY_NOTE] if noisy_seen else []), *contention_notes(list(cells.values()))])
    return Sheet(title, caption, list(layout.columns), blocks)


def memory_columns(layout: Grid) -> list[str]:
    """The columns in which some row has a memory figure: the others (e.g. `all`, whose agreement records
    measure no memory) would show only dashes in the memory table."""
    return [column for column in layout.columns
            if any(cell(record.memory) is not None or energy_cell(record.metrics) is not None for case in layout.cases
                   if (record := layout.cells.get((case, column))) is not None for _, cell in MEMORY_ROWS)]


def memory_sheet(layout: Grid, title: str) -> Sheet | None:
    """The memory figures of `layout`'s records: a row per case and kind (host peak, device peak, compiled),
    a column per column of `layout` with a memory figure (`memory_columns`); None when no record has any."""
    columns = memory_columns(layout)
    blocks: list[tuple[str, list[tuple[str, list[Cell | None]]]]] = []
    compiled_seen = False
    for case in layout.cases:
        rows: list[tuple[str, list[Cell | None]]] = [
            (name, [None if v is None else pieces_of(v) for v in values])
            for name, values in memory_values([layout.cells.get((case, c)) for c in columns])]
        compiled_seen = compiled_seen or any(name == "compiled" for name, _ in rows)
        if rows:
            blocks.append((case, rows))
    if not blocks:
        return None
    # XLA's analysis is explained only where a compiled row is shown (a NumPy-only table has none), the energy
    # only where a GPU's figure has it.
    caption = MEMORY_NOTE if compiled_seen else MEMORY_NOTE.partition("; compiled")[0]
    if any(name == "energy" for _, rows in blocks for name, _ in rows):
        caption += f"; {ENERGY_NOTE}"
    return Sheet(f"{title}: memory", caption, columns, blocks, kind_header="memory", value_header="size")


def rounds_table(title: str, figures: Sequence[FigureSpread], rounds: int, records: Sequence[Record]) -> Fitting:
    """`--rounds N`'s summary: a row per figure (case, backend), the median of its round medians and their
    spread, and 'busy' with the number of rounds where it was taken on a busy machine (nothing here is ranked);
    wide where it fits, else each case's name on a line of its own with its figures under it."""
    busy_seen = any(figure.busy_rounds for figure in figures)
    columns = ["median of round medians", "round spread", *(["contention"] if busy_seen else [])]
    blocks: dict[str, list[tuple[str, list[Cell | None]]]] = {}
    for figure in figures:
        cells: list[Cell | None] = [Pieces(((format_seconds(figure.median_s), ""),)),
                                    Pieces(((f"{figure.spread_pct:.1f} %", ""),))]
        if busy_seen:
            cells.append(Pieces(((BUSY_WORD, "bold red"), (f"{figure.busy_rounds} of {rounds} rounds", "")))
                         if figure.busy_rounds else "")
        blocks.setdefault(figure.case, []).append((figure.column, cells))
    caption = "\n".join(contention_notes(records))
    sheet = Sheet(title, caption, columns, list(blocks.items()), kind_header="backend")
    return Fitting((sheet.wide, sheet.vertical))
