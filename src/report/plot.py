"""Bar charts of a report table: backends side by side, error bars = IQR.

The jit group gets one panel per kind of execution (compiled vs eager /
no-jit) on a shared time axis, so the speed-up of jit reads at a glance.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from src.core.plots import new_figure, save_figure
from src.report.rows import FigureRow, ReportTable

if TYPE_CHECKING:
    from matplotlib.axes import Axes

COMPILED_VARIANTS = frozenset({"jit", "jitted", "compiled", "compile", "torch.compile", "xla"})
# A wider spread of medians than this is drawn on a log axis.
LOG_SCALE_SPREAD = 20.0
MAX_WIDTH = 30.0  # inches


def is_compiled(row: FigureRow) -> bool:
    variant = (row.record.variant or "").lower()
    return variant in COMPILED_VARIANTS or variant.startswith("jit")


def panels(table: ReportTable) -> list[tuple[str, list[FigureRow]]]:
    """(title, rows) per panel: jit vs no-jit for the jit group, one panel otherwise."""
    timed = [row for row in table.rows if row.record.median_s]
    if table.group == "jit":
        compiled = [row for row in timed if is_compiled(row)]
        eager = [row for row in timed if not is_compiled(row)]
        split = [("jit", compiled), ("no jit / eager", eager)]
    else:
        split = [(table.group, timed)]
    return [(title, rows) for title, rows in split if rows]


def error_bar(row: FigureRow) -> tuple[float, float]:
    """(below, above) the median: the quartiles of the raw samples, else ± IQR/2."""
    median = row.record.median_s or 0.0
    samples = row.record.samples_s
    if len(samples) >= 2:
        q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
        below, above = median - q1, q3 - median
    else:
        below = above = (row.record.iqr_s or 0.0) / 2
    # Never reach zero: the axis may be logarithmic.
    return max(min(below, median * 0.999), 0.0), max(above, 0.0)


def color_key(row: FigureRow, group: str) -> str:
    """Same colour for the same thing in every panel: in the jit group, a backend keeps its
    colour from the no-jit panel to the jit panel; elsewhere each column has its own."""
    if group == "jit":
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
    ax.set_ylabel("median time per call (s)")
    if log_scale:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def plot_table(table: ReportTable, directory: Path | None = None) -> Path | None:
    """Write `<group>_<run_id>.png`; None when the table has no timed figure."""
    chosen = panels(table)
    if not chosen:
        return None
    medians = [row.record.median_s or 0.0 for _, rows in chosen for row in rows]
    log_scale = max(medians) / min(medians) > LOG_SCALE_SPREAD
    cases = max(len({row.case for row in rows}) for _, rows in chosen)
    fig = new_figure(width=min(max(6.0, 1.6 + 1.4 * cases) * len(chosen), MAX_WIDTH), height=4.8)
    axes = fig.subplots(1, len(chosen), sharey=True, squeeze=False)[0]
    color_of = colors(table, chosen)
    for ax, (title, rows) in zip(axes, chosen):
        # A lone panel needs no title of its own: the figure's title names the group.
        draw_panel(ax, title if len(chosen) > 1 else None, rows, log_scale, color_of, table.group)
    fig.suptitle(f"{table.title}\n{table.env.get('cpu') or ''} · GPU: {table.env.get('gpu') or 'none'}",
                 fontsize=9)
    name = re.sub(r"[^\w.-]", "_", f"{table.group}_{table.run_id}")
    return save_figure(fig, name) if directory is None else save_figure(fig, name, directory)
