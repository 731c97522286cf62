"""Rich tables of records: rows = cases, columns = backends (one code path for all groups)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.table import Table

from jax_benchmarks.cli.console import literal
from jax_benchmarks.measure.contention import busy_line, of_fields, unknown_line
from jax_benchmarks.measure import energy
from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.measure.oversubscription import contention_threads_line
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
BUSY_MARK = "!"


def is_busy(record: Record) -> bool:
    """Taken while other processes held the machine (jax_benchmarks.measure.contention)."""
    return record.contention.get("busy") is True


def contention_notes(records: Sequence[Record]) -> list[str]:
    """The lines under a table on contention: which figures were taken on a busy machine ('!') and at
    worst how busy, and those whose contention could not be told (and why); none on a quiet machine."""
    seen = [c for r in records if r.median_s and (c := of_fields(r.contention)) is not None]
    busy = busy_line(seen)
    return [line for line in (busy and f"{BUSY_MARK} {busy}", contention_threads_line(records), unknown_line(seen))
            if line]


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


def energy_cell(metrics: Mapping[str, Scalar]) -> str | None:
    """The energy of a GPU figure's timed calls (NVML's counter): '12.3 J/call · 96.1 mJ/image'; 'not measured' where
    the counter could not be read; None for a figure with no energy field (a CPU's)."""
    per_call, per_image = metrics.get(energy.PER_CALL), metrics.get(energy.PER_IMAGE)
    if isinstance(per_call, float):
        return f"{per_call:.3g} J/call" + (f" · {per_image * 1e3:.3g} mJ/image" if isinstance(per_image, float) else "")
    return energy.NOT_MEASURED if energy.STATUS in metrics else None


MEMORY_NOTE = ("memory: peak above what the process (device) held before the case, taken apart from the timing; "
               "compiled = XLA's memory analysis of the program")


def memory_rows(case: str, records: Sequence[Record | None]) -> list[list[str]]:
    """The memory rows of a case across the columns ('—' where a column has no such figure)."""
    rows = []
    for name, cell in MEMORY_ROWS:
        values = [None if record is None else cell(record.memory) for record in records]
        if any(v is not None for v in values):
            rows.append([f"{case} · {name}", *("—" if v is None else v for v in values)])
    # Beside the device's memory, the energy of its timed calls (a GPU's figures only).
    spent = [None if record is None else energy_cell(record.metrics) for record in records]
    if any(v is not None for v in spent):
        rows.append([f"{case} · energy", *("—" if v is None else v for v in spent)])
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
        timed = self.timed.get(case, [])
        if record is None or not record.median_s or len(timed) < 2:
            return None
        return record.median_s / min(timed)

    @cached_property
    def timed(self) -> dict[str, list[float]]:
        """Each case's timed medians, in every column of the cells (a part of a split table keeps them all);
        gathered once, not once a cell."""
        out: dict[str, list[float]] = {}
        for (case, _), record in self.cells.items():
            if record.median_s:
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
    "test_images": "test images", "mean": "pixel mean (0–255)", "std": "pixel std (0–255)",
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


# The narrowest a figure's column gets: '1.2 ms ±' and '30 µs ×2.00' wrap onto lines of this width.
FIGURE_MIN_WIDTH = 9


@dataclass(frozen=True)
class Part:
    """A group of consecutive columns of a split table, ready to print: its timing table, then (apart, after
    every part's timing table) its memory table; laid out as segments, or, for a column too wide even alone,
    the tables themselves (the console crops what is wider)."""

    timing: list[Segment] | list[Table]
    memory: list[Segment] | list[Table]


@dataclass(frozen=True)
class Tables:
    """The timing table of some records, then their memory table: laid out when printed, for the console's
    width. A case name is never cut: the case column is as wide as the longest name, the figures' columns
    wrap instead; where even that does not fit, cases are numbered (#1, #2, ...) and a legend below names
    them. Where the figures' columns still do not fit (a console crops what is wider, and a whole backend's
    column would vanish), they are split over several tables, each with the case column, in order."""

    layout: Grid
    title: str
    metric_rows: Sequence[str]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        names = self.layout.cases
        labels = {case: case for case in names}
        whole = self.rendered(console, options, self.layout, labels)
        if whole is None:
            labels = {case: f"#{index}" for index, case in enumerate(names, 1)}
            whole = self.rendered(console, options, self.layout, labels, measure_first=True)
        if whole is not None:  # everything fits: print what was laid out to find that out, not a second layout
            timing_lines, memory_lines = whole
            yield from timing_lines
            yield from self.legend(labels)
            yield from memory_lines
            return
        parts = self.column_parts(console, options, labels)
        for part in parts:
            yield from part.timing
        yield from self.legend(labels)
        for part in parts:
            yield from part.memory

    def legend(self, labels: Mapping[str, str]) -> list[str]:
        """The line naming the numbered cases; none when the cases go by their names."""
        if all(label == case for case, label in labels.items()):
            return []
        return ["cases: " + literal("; ".join(f"{label} {case}" for case, label in labels.items()))]

    def tables(self, layout: Grid, labels: Mapping[str, str], title: str | None = None,
               notes: tuple[bool, bool] = (True, True)) -> tuple[Table, Table | None]:
        """The timing and memory tables of `layout` (the memory one None when no record has a memory figure);
        `notes`: whether each carries its caption (a split table explains its cells once, under the last part
        with such a table)."""
        title = self.title if title is None else title
        timing = timing_table(layout, title, self.metric_rows, labels)
        memory = memory_table(layout, title, labels)
        if not notes[0]:
            timing.caption = None
        if memory is not None and not notes[1]:
            memory.caption = None
        return timing, memory

    def rendered(self, console: Console, options: ConsoleOptions, layout: Grid, labels: Mapping[str, str],
                 title: str | None = None, notes: tuple[bool, bool] = (True, True),
                 measure_first: bool = False) -> tuple[list[Segment], list[Segment]] | None:
        """The timing and memory tables of `layout` laid out for the console, as segments to print; None when
        either is wider than the console. With `measure_first`, tables wider than the console even at their
        narrowest (`narrowest`) are not laid out: rich measures a table too wide twice before it can tell."""
        timing, memory = self.tables(layout, labels, title, notes)
        tables = [timing, *([] if memory is None else [memory])]
        if measure_first and any(fixed + sum(widths.values()) > options.max_width for fixed, widths in
                                 (narrowest(console, options, table, []) for table in tables)):
            return None
        timing_lines = fitted(console, options, timing)
        memory_lines = [] if memory is None else fitted(console, options, memory)
        return None if timing_lines is None or memory_lines is None else (timing_lines, memory_lines)

    def column_parts(self, console: Console, options: ConsoleOptions, labels: Mapping[str, str]) -> list[Part]:
        """The layout split into consecutive groups of columns whose timing and memory tables each fit the
        console, at their narrowest as rich lays them out (a column too wide even alone gets a group of its
        own), laid out. Each part keeps every cell, so a figure's ratio is still to its row's fastest across
        all parts.

        Each part is the longest run of the next columns that fits. Rich lays no column out narrower than its
        widest word, so each column's narrowest width (measured once for the whole table, `narrowest`) bounds
        how many columns a part can hold; that many are laid out, and where rich's layout comes out wider than
        the sum (it did by 3 to 7 characters), fewer, found by halving: a few layouts a part, not one a column,
        and the one that fits is the one printed."""
        columns = self.layout.columns
        timing, memory = self.tables(self.layout, labels)
        # The memory table has only the columns with a memory figure (`memory_columns`): a part without any
        # has no memory table, and nothing bounds it there.
        bounds = [narrowest(console, options, timing, columns)]
        if memory is not None:
            bounds.append(narrowest(console, options, memory, memory_columns(self.layout)))

        def within(run: Sequence[str]) -> bool:
            return all(fixed + sum(widths.get(c, 0) for c in run) <= options.max_width
                       for fixed, widths in bounds if any(c in widths for c in run))

        parts: list[Part] = []
        start = 0
        while start < len(columns):
            bound = start + 1
            while bound < len(columns) and within(columns[start:bound + 1]):
                bound += 1
            end, part = self.longest_fitting(console, options, labels, start, bound)
            parts.append(part)
            start = end
        return parts

    def longest_fitting(self, console: Console, options: ConsoleOptions, labels: Mapping[str, str],
                        start: int, bound: int) -> tuple[int, Part]:
        """The longest run of columns from `start` (one at least, `bound` at most) whose tables fit, laid out:
        its end and its part. Adding a column never narrows a table, so the runs that fit are the shorter ones."""
        columns = self.layout.columns
        with_memory = set(memory_columns(self.layout))

        def part(end: int) -> tuple[Grid, Mapping[str, str], str, tuple[bool, bool]]:
            """Columns start..end: their layout, the labels, their title, and whether their timing and memory
            tables are the last ones printed (they carry the notes)."""
            layout = Grid(self.layout.cases, columns[start:end], self.layout.cells)
            title = self.title
            if start > 0 or end < len(columns):
                title = f"{self.title} (columns {start + 1}–{end} of {len(columns)})"
            return layout, labels, title, (end == len(columns), with_memory.isdisjoint(columns[end:]))

        def laid_out(end: int) -> Part | None:
            lines = self.rendered(console, options, *part(end))
            return None if lines is None else Part(*lines)

        low, high = start + 1, bound  # low: a column alone is a part, fitting or not
        found = laid_out(high)
        if found is not None:
            return high, found
        while low < high - 1:
            middle = (low + high) // 2
            if (candidate := laid_out(middle)) is not None:
                low, found = middle, candidate
            else:
                high = middle
        if found is None and low < bound:  # (low == bound: that one did not fit)
            found = laid_out(low)
        if found is None:  # a column too wide even alone: its tables as they are, for the console to crop
            timing, memory = self.tables(*part(low))
            found = Part([timing], [] if memory is None else [memory])
        return low, found


def narrowest(console: Console, options: ConsoleOptions, table: Table,
              figures: Sequence[str]) -> tuple[int, dict[str, int]]:
    """How narrow rich can lay `table` out at the least: the width of its borders and of its columns but its last
    ones, the `figures` columns, then each of those, its border included. Rich lays no column out narrower than
    its widest word (its Measurement of each cell and of the header) or its min_width, plus its padding; its
    own layout may come out wider (`fitted` tells whether it fits)."""
    _, right, _, left = table.padding
    widest: list[int] = []
    for column in table.columns:
        words = max(Measurement.get(console, options, cell).minimum for cell in [column.header, *column.cells])
        widest.append(max(words, column.min_width or 0) + left + right + 1)
    fixed = len(widest) - len(figures)
    return 1 + sum(widest[:fixed]), dict(zip(figures, widest[fixed:]))


def fitted(console: Console, options: ConsoleOptions, table: Table) -> list[Segment] | None:
    """`table` laid out by rich for the console's width (columns shrunk, what wraps wrapped), as the segments
    to print, lines ended; None when a line is wider than the console: a console crops what is wider, and a
    column beyond the edge would vanish. Rich yields the lines one by one, the table's top border among the
    first (its widest line: the title wraps within it): a table too wide is given up there, its rows never laid out."""
    segments: list[Segment] = []
    for line in Segment.split_lines(console.render(table, options)):
        if Segment.get_line_length(line) > options.max_width:
            return None
        segments += (*line, Segment.line())
    return segments


def comparison_table(records: Sequence[Record], title: str, metric_rows: Sequence[str] = ()) -> Tables:
    """Median ± IQR per case and backend, the ratio to the row's fastest, and metric rows under their case;
    then the memory figures in a table of their own (see `Tables`). Every name in it (title, cases, columns,
    text metrics) is printed literally: it may come from a results file."""
    # A record with nothing to show in a cell (e.g. a parity record: its figures
    # are in `checks`) gets no column.
    layout = grid([r for r in records if r.median_s is not None or any(m in r.metrics for m in metric_rows)])
    return Tables(layout, title, tuple(metric_rows))


def _case_columns(table: Table, labels: Mapping[str, str]) -> None:
    table.add_column("case", no_wrap=True, min_width=max((len(label) for label in labels.values()), default=4))


def _figure_columns(table: Table, layout: Grid) -> None:
    for col in layout.columns:
        table.add_column(literal(col), justify="right", min_width=max(len(col), FIGURE_MIN_WIDTH))


def timing_table(layout: Grid, title: str, metric_rows: Sequence[str], labels: Mapping[str, str]) -> Table:
    """A row per case (named by `labels`), with its metric rows under it."""
    cells = layout.cells
    table = Table(title=literal(title), title_justify="left")
    _case_columns(table, labels)
    _figure_columns(table, layout)
    noisy_seen = False
    for case in layout.cases:
        timed = any(r.median_s for (c, _), r in cells.items() if c == case)
        if timed:
            row = [literal(labels[case])]
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
                # Under its case, which the row above names (a case with metrics only is named here).
                named = metric_label(metric, case)
                label = f"  · {named}" if timed else f"{labels[case]} · {named}"
                table.add_row(literal(label), *("—" if v is None else literal(format_value(v)) for v in values))
    table.caption = "\n".join([CELL_NOTE, *([NOISY_NOTE] if noisy_seen else []),
                                *(literal(note) for note in contention_notes(list(cells.values())))])
    return table


def memory_columns(layout: Grid) -> list[str]:
    """The columns in which some row has a memory figure: the others (e.g. `all`, whose agreement records
    measure no memory) would show only dashes in the memory table."""
    return [column for column in layout.columns
            if any(cell(record.memory) is not None or energy_cell(record.metrics) is not None for case in layout.cases
                   if (record := layout.cells.get((case, column))) is not None for _, cell in MEMORY_ROWS)]


def memory_table(layout: Grid, title: str, labels: Mapping[str, str]) -> Table | None:
    """The memory figures of `layout`'s records: a row per case and kind (host peak, device peak, compiled),
    the case named once, a column per column of `layout` with a memory figure (`memory_columns`); None when
    no record has any."""
    layout = Grid(layout.cases, memory_columns(layout), layout.cells)
    table = Table(title=literal(f"{title}: memory"), title_justify="left")
    _case_columns(table, labels)
    table.add_column("memory", no_wrap=True)
    _figure_columns(table, layout)
    compiled_seen = False
    for case in layout.cases:
        rows = memory_rows(case, [layout.cells.get((case, c)) for c in layout.columns])
        for index, (label, *values) in enumerate(rows):
            kind = label.removeprefix(f"{case} · ")
            table.add_row(literal(labels[case]) if index == 0 else "", kind, *(literal(v) for v in values))
            compiled_seen = compiled_seen or kind == "compiled"
    # XLA's analysis is explained only where a compiled row is shown (a NumPy-only table has none).
    table.caption = MEMORY_NOTE if compiled_seen else MEMORY_NOTE.partition("; compiled")[0]
    return table if table.row_count else None
