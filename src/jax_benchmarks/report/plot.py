"""Charts of a report table: bars (median, error bars = quartiles) and box plots of the raw samples.

A group that declares `compiled_apart` (`jax_benchmarks.groups`: the jit group) gets one panel per kind of
execution (compiled vs eager / no-jit) on a shared time axis, so the speed-up of jit reads at a glance.
Time axes are in engineering units (ns/µs/ms/s); titles name the machine
and the library versions. Builders return a matplotlib `Figure`; the CLI
saves it as a PNG file, the HTML page embeds its PNG bytes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jax_benchmarks.frameworks.descriptors import version_keys
from jax_benchmarks.cli.plots import new_figure, save_figure
from jax_benchmarks.groups import GROUPS
from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.report.envdiff import cpu_text
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.report.history import GroupHistory, quartiles
from jax_benchmarks.report.rows import FigureRow, ReportTable

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COMPILED_VARIANTS = frozenset({"jit", "jitted", "compiled", "compile", "torch.compile", "xla"})
# A wider spread of medians than this is drawn on a log axis.
LOG_SCALE_SPREAD = 20.0
MAX_WIDTH = 30.0  # inches
HISTORY_COLUMNS = 3  # panels per row of a history chart


def is_compiled(row: FigureRow) -> bool:
    variant = (row.record.variant or "").lower()
    return variant in COMPILED_VARIANTS or variant.startswith("jit")


def compiled_apart(group: str) -> bool:
    """Whether the group declares its compiled and eager figures drawn apart (`GroupEntry.compiled_apart`)."""
    entry = GROUPS.get(group)
    return entry is not None and entry.compiled_apart


def panels(table: ReportTable) -> list[tuple[str, list[FigureRow]]]:
    """(title, rows) per panel: jit vs no-jit for a group that draws them apart (the jit group), one otherwise."""
    timed = [row for row in table.rows if row.record.median_s]
    if compiled_apart(table.group):
        compiled = [row for row in timed if is_compiled(row)]
        eager = [row for row in timed if not is_compiled(row)]
        split = [("jit", compiled), ("no jit / eager", eager)]
    else:
        split = [(table.group, timed)]
    return [(title, rows) for title, rows in split if rows]


def error_bar(row: FigureRow) -> tuple[float, float]:
    """(below, above) the median: the quartiles of the raw samples, else ± IQR/2."""
    median = row.record.median_s or 0.0
    q1, q3 = quartiles(row.record)
    # Never reach zero: the axis may be logarithmic.
    return max(min(median - q1, median * 0.999), 0.0), max(q3 - median, 0.0)


def color_key(row: FigureRow, group: str) -> str:
    """Same colour for the same thing in every panel: where compiled and eager are drawn apart (the jit group), a
    backend keeps its colour from the no-jit panel to the jit panel; elsewhere each column has its own."""
    if compiled_apart(group):
        return row.column.replace(f" {row.record.variant}", "", 1) if row.record.variant else row.column
    return row.column


def colors(table: ReportTable, chosen: Sequence[tuple[str, list[FigureRow]]]) -> dict[str, str]:
    keys = dict.fromkeys(color_key(row, table.group) for _, rows in chosen for row in rows)
    return {key: f"C{i % 10}" for i, key in enumerate(keys)}


def draw_panel(ax: Axes, title: str | None, rows: Sequence[FigureRow], log_scale: bool,
               color_of: dict[str, str], group: str) -> None:
    cases = list(dict.fromkeys(row.case for row in rows))
    columns = list(dict.fromkeys(row.column for row in rows))
    width = 0.8 / len(columns)
    for i, column in enumerate(columns):
        xs, heights, below, above = [], [], [], []
        color = "C0"
        for row in rows:
            if row.column == column:
                xs.append(cases.index(row.case) - 0.4 + width * (i + 0.5))
                heights.append(row.record.median_s or 0.0)
                err = error_bar(row)
                below.append(err[0])
                above.append(err[1])
                color = color_of[color_key(row, group)]
        ax.bar(xs, heights, width=width, yerr=[below, above], capsize=3, label=column, color=color)
    if title is not None:
        ax.set_title(title)
    ax.set_xticks(range(len(cases)), cases, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("median time per call")
    time_axis(ax, log_scale)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def time_axis(ax: Axes, log_scale: bool) -> None:
    """Seconds on the y axis, labelled in engineering units (500 µs, 2 ms, 1 s)."""
    from matplotlib.ticker import EngFormatter, LogLocator

    formatter = EngFormatter(unit="s", places=None, sep=" ")
    if log_scale:
        ax.set_yscale("log")
        # Label 2× and 5× between the decades too (1, 2, 5, 10, 20, ...): a span of one
        # or two decades would otherwise show only one or two labels.
        ax.yaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        ax.yaxis.set_minor_formatter(formatter)
    ax.yaxis.set_major_formatter(formatter)
    ax.tick_params(axis="y", which="both", labelsize=8)


def machine_title(env: dict[str, Scalar]) -> str:
    """'<CPU> (N cores, AVX-512) · GPU: <name> · jax 0.10.2 · torch 2.13.0 · ...': where and with what it ran."""
    versions = [f"{lib} {env[lib]}" for lib in ("python", *version_keys()) if env.get(lib)]
    return " · ".join([cpu_text(env), f"GPU: {env.get('gpu') or 'none'}", *versions])


def spreads_widely(values: Sequence[float]) -> bool:
    positive = [v for v in values if v > 0]
    return bool(positive) and max(positive) / min(positive) > LOG_SCALE_SPREAD


def peak_bytes(row: FigureRow) -> int | None:
    """The figure's peak memory: on the device where it ran on one, else on the host."""
    for key in ("device_peak_bytes", "host_peak_bytes"):
        value = row.record.memory.get(key)
        if type(value) is int:
            return value
    return None


def draw_memory_panel(ax: Axes, rows: Sequence[FigureRow], color_of: dict[str, str], group: str) -> None:
    """Bars of each figure's peak memory, beside the time panels (same cases, same colours)."""
    from matplotlib.ticker import FuncFormatter

    cases = list(dict.fromkeys(row.case for row in rows))
    columns = list(dict.fromkeys(row.column for row in rows))
    width = 0.8 / len(columns)
    for i, column in enumerate(columns):
        chosen = [row for row in rows if row.column == column]
        ax.bar([cases.index(row.case) - 0.4 + width * (i + 0.5) for row in chosen],
               [float(peak_bytes(row) or 0) for row in chosen], width=width, label=column,
               color=color_of.get(color_key(chosen[0], group), "C0"))
    ax.set_title("peak memory (above what was held before)", fontsize=9)
    ax.set_xticks(range(len(cases)), cases, rotation=30, ha="right", fontsize=8)
    if spreads_widely([float(peak_bytes(row) or 0) for row in rows]):
        ax.set_yscale("symlog", linthresh=4096)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: format_bytes(value)))
    ax.tick_params(axis="y", which="both", labelsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def table_figure(table: ReportTable) -> Figure | None:
    """Bars of the medians with quartile error bars, and of the peak memory beside them; None when the
    table has no timed figure."""
    chosen = panels(table)
    if not chosen:
        return None
    log_scale = spreads_widely([row.record.median_s or 0.0 for _, rows in chosen for row in rows])
    cases = max(len({row.case for row in rows}) for _, rows in chosen)
    with_memory = [row for _, rows in chosen for row in rows if peak_bytes(row) is not None]
    count = len(chosen) + bool(with_memory)
    fig = new_figure(width=min(max(6.0, 1.6 + 1.4 * cases) * count, MAX_WIDTH), height=4.8)
    axes = fig.subplots(1, count, squeeze=False)[0]
    color_of = colors(table, chosen)
    for ax, (title, rows) in zip(axes, chosen):
        if ax is not axes[0]:
            ax.sharey(axes[0])  # one time axis for the time panels; memory has its own
        # A lone panel needs no title of its own: the figure's title names the group.
        draw_panel(ax, title if count > 1 else None, rows, log_scale, color_of, table.group)
    if with_memory:
        draw_memory_panel(axes[-1], with_memory, color_of, table.group)
    fig.suptitle(f"{table.title}\n{machine_title(table.env)}", fontsize=9)
    return fig


def spread_figure(table: ReportTable) -> Figure | None:
    """Box plots of the raw samples of every timed figure (one box per case and column).

    Figures measured once (an epoch, a whole solve) have a single sample and are
    drawn as a dot. None when no figure has samples.
    """
    rows = [row for row in table.rows if row.record.median_s and row.record.samples_s]
    if not rows:
        return None
    samples = [row.record.samples_s for row in rows]
    labels = [f"{row.case}\n{row.column}" for row in rows]
    fig = new_figure(width=min(max(6.0, 1.0 + 0.75 * len(rows)), MAX_WIDTH), height=5.2)
    ax = fig.subplots()
    boxes = ax.boxplot(samples, showfliers=True, widths=0.6, patch_artist=True,
                       flierprops={"marker": ".", "markersize": 4, "alpha": 0.6},
                       medianprops={"color": "black", "linewidth": 1.5})
    columns = list(dict.fromkeys(row.column for row in rows))
    for box, row in zip(boxes["boxes"], rows):
        box.set_facecolor(f"C{columns.index(row.column) % 10}")
        box.set_alpha(0.7)
    for x, values in enumerate(samples, start=1):
        if len(values) == 1:
            ax.plot([x], values, marker="o", color="C0")
    ax.set_xticks(range(1, len(rows) + 1), labels, rotation=35, ha="right", fontsize=7)
    ax.set_ylabel("time per call (every sample)")
    time_axis(ax, spreads_widely([v for values in samples for v in values]))
    ax.grid(axis="y", alpha=0.3)
    counts = sorted({len(values) for values in samples})
    ax.set_title(f"spread of the samples (n = {', '.join(map(str, counts))} per figure; "
                 "box = quartiles, whiskers = 1.5 IQR)", fontsize=8)
    fig.suptitle(f"{table.title}\n{machine_title(table.env)}", fontsize=9)
    return fig


def figure_name(table: ReportTable, kind: str = "") -> str:
    return re.sub(r"[^\w.-]", "_", f"{table.group}_{table.run_id}{kind}")


def plot_table(table: ReportTable, directory: Path | None = None) -> Path | None:
    """Write `<group>_<run_id>.png`; None when the table has no timed figure."""
    fig = table_figure(table)
    if fig is None:
        return None
    name = figure_name(table)
    return save_figure(fig, name) if directory is None else save_figure(fig, name, directory)


def plot_spread(table: ReportTable, directory: Path | None = None) -> Path | None:
    """Write `<group>_<run_id>_spread.png` (box plots of the samples); None without samples."""
    fig = spread_figure(table)
    if fig is None:
        return None
    name = figure_name(table, "_spread")
    return save_figure(fig, name) if directory is None else save_figure(fig, name, directory)


def history_figure(history: GroupHistory) -> Figure | None:
    """One panel per case, one line per column: the median over the runs, quartiles shaded.

    The x axis is the runs in order, labelled by date, git commit and the library
    versions that change between them. None when no figure was timed.
    """
    cases = list(dict.fromkeys(s.case for s in history.series))
    if not cases:
        return None
    ncols = min(len(cases), HISTORY_COLUMNS)
    nrows = math.ceil(len(cases) / ncols)
    width = min(max(5.0, 1.2 + 0.9 * len(history.runs)) * ncols, MAX_WIDTH)
    fig = new_figure(width=width, height=3.6 * nrows + 0.8)
    axes = fig.subplots(nrows, ncols, squeeze=False).flatten()
    labels = [history.label(run, sep="\n") for run in history.runs]
    columns = list(dict.fromkeys(s.column for s in history.series))
    for ax, case in zip(axes, cases):
        medians: list[float] = []
        for series in (s for s in history.series if s.case == case):
            xs = [i for i, run in enumerate(history.runs) if run.run_id in series.points]
            records = [series.points[history.runs[i].run_id] for i in xs]
            ys = [r.median_s or 0.0 for r in records]
            low, high = zip(*(quartiles(r) for r in records))
            color = f"C{columns.index(series.column) % 10}"
            ax.plot(xs, ys, marker="o", color=color, label=series.column)
            ax.fill_between(xs, low, high, color=color, alpha=0.15, linewidth=0)
            medians += ys
        ax.set_title(case, fontsize=9)
        ax.set_xticks(range(len(labels)), labels, fontsize=6)
        ax.set_xlim(-0.5, len(labels) - 0.5)
        time_axis(ax, spreads_widely(medians))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[len(cases):]:
        ax.set_visible(False)
    latest = history.runs[-1].env if history.runs else {}
    fig.suptitle(f"{history.group}: median per call over {len(history.runs)} run(s) (band: quartiles)\n"
                 f"{machine_title(latest)}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_history(history: GroupHistory, directory: Path | None = None) -> Path | None:
    """Write `<group>_history.png`; None when no figure was timed."""
    fig = history_figure(history)
    if fig is None:
        return None
    name = re.sub(r"[^\w.-]", "_", f"{history.group}_history")
    return save_figure(fig, name) if directory is None else save_figure(fig, name, directory)
