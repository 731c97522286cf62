"""Output formats. All of them render the same `ReportTable`s.

`table` reuses the core's rich `comparison_table`; markdown, CSV and JSON are
one function each. Only the CLI decides where the text goes.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from jax_benchmarks.measure.memory import SHOWN_BYTES
from jax_benchmarks.report.envdiff import cpu_text
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.frameworks.descriptors import version_keys
from jax_benchmarks.cli.console import literal, markdown_row, markdown_text, spreadsheet_cell
from jax_benchmarks.cli.tables import (MEMORY_NOTE, NOISY_NOTE, Cell, Fitting, Pieces, Sheet, comparison_table,
                                       contention_notes, format_seconds, is_busy, memory_rows,
                                       metric_label, metric_texts, pieces_of, timing_cell)
from jax_benchmarks.report.compare import Comparison
from jax_benchmarks.report.history import GroupHistory, RunInfo, history_cells, history_headers, history_rows
from jax_benchmarks.report.rows import FigureRow, ReportTable

# The terminal's history table: rich keeps each header line whole and narrows the figure column first.
# A column's padding and rule take 3 characters; the last column's header, "last vs first", 13.
CHANGE_COLUMN_WIDTH = 3 + 13
SHORTEST_CELL = 10  # "123.4 µs ~"
VERDICT_STYLE = {"slower": "red", "faster": "green", "unchanged": "dim", "too few samples": "yellow",
                 "busy machine": "yellow"}


# ------------------------------------------------------------- pieces ---

def env_header(env: dict[str, Scalar]) -> str:
    """CPU, GPU and library versions of a run, on one line."""
    parts = [f"CPU: {cpu_text(env)}", f"GPU: {env.get('gpu') or 'none'}"]
    parts += [f"{lib} {env[lib]}" for lib in ("python", *version_keys()) if env.get(lib)]
    if env.get("git_commit"):
        parts.append(f"git {env['git_commit']}")
    return " · ".join(parts)


def timing_text(median_s: float, iqr_s: float) -> str:
    return f"{format_seconds(median_s)} ± {format_seconds(iqr_s)}"


def cell_text(row: FigureRow | None) -> str:
    """'1.2 ms ± 30 µs ×2.00 ~' like the rich table, without markup."""
    return "—" if row is None else timing_cell(row.record, row.ratio)


def test_text(comparison: Comparison) -> str:
    return comparison.test_text


def change_cells(row: FigureRow) -> list[str]:
    """case, column, baseline, now, change, verdict, test."""
    comp = row.comparison
    assert comp is not None and row.record.median_s is not None
    return [
        row.case, row.column,
        timing_text(comp.baseline_median_s, comp.baseline_iqr_s),
        timing_text(comp.median_s or row.record.median_s, comp.iqr_s or 0.0),  # over the rounds
        comp.change_text, comp.verdict, test_text(comp),
    ]


CHANGE_HEADERS = ["case", "backend", "baseline", "now", "change", "verdict", "test"]


# The test column's narrowest in the terminal's wide table: its sentence wraps between words, a few to a line.
TEST_MIN_WIDTH = 32


def changes_layouts(table: ReportTable) -> Fitting:
    """The gate's table for the terminal: a row per compared figure where it fits the console; else each case's
    name on a line of its own, each backend under it and its baseline, now, change, verdict and test under that
    (the test's sentence wrapped between words), no name or figure cut."""
    blocks: dict[str, list[tuple[str, list[Cell | None]]]] = {}
    for row in table.compared:
        case, column, baseline, now, change, verdict, test = change_cells(row)
        style = VERDICT_STYLE[row.comparison.verdict if row.comparison else "unchanged"]
        blocks.setdefault(case, []).append((column, [pieces_of(baseline), pieces_of(now), pieces_of(change),
                                                     Pieces(((verdict, style),)), test]))
    sheet = Sheet(f"{table.group}: change against the baseline", "", CHANGE_HEADERS[2:], list(blocks.items()),
                  kind_header="backend", min_widths={"test": TEST_MIN_WIDTH}, left=frozenset({"verdict", "test"}))
    return Fitting((sheet.wide, sheet.vertical))


def baseline_summary(table: ReportTable) -> str | None:
    if table.baseline_note is None:
        return None
    text = table.baseline_note
    if table.unmatched:
        text += f" ({table.unmatched} figure(s) not in the baseline)"
    return text


# ------------------------------------------------------------ formats ---

def render_rich(tables: Sequence[ReportTable], console: Console) -> None:
    for table in tables:
        console.print(literal(env_header(table.env)), style="dim")
        console.print(comparison_table(table.records, table.title, table.row_metrics))
        summary = baseline_summary(table)
        if summary is not None:
            console.print("\n".join(literal(line) for line in summary.split("\n")))  # its lines are the code's
        if table.compared:
            console.print(changes_layouts(table))
        console.print()


def render_markdown(tables: Sequence[ReportTable]) -> str:
    """GitHub-flavoured markdown, ready to paste into the README."""
    out: list[str] = []
    for table in tables:
        out += [f"### {markdown_text(table.title)}", "", markdown_text(env_header(table.env)), ""]
        out.append(markdown_row(["case", *table.columns]))
        out.append("|---|" + "---:|" * len(table.columns))
        for case in table.cases:
            cells = [table.cell(case, col) for col in table.columns]
            if any(c is not None and c.record.median_s for c in cells):
                out.append(markdown_row([case, *(cell_text(c) for c in cells)]))
            for metric in table.row_metrics:
                values = metric_texts(metric, [c.record if c is not None else None for c in cells])
                if any(v is not None for v in values):
                    out.append(markdown_row([f"{case} · {metric_label(metric, case)}",
                                        *("—" if v is None else v for v in values)]))
            out += [markdown_row(cells) for cells in memory_rows(case, [c.record if c else None for c in cells])]
        if any(row.record.noisy for row in table.rows):
            out += ["", NOISY_NOTE]
        if any(row.record.memory for row in table.rows):
            out += ["", MEMORY_NOTE]
        out += [line for note in contention_notes(table.records) for line in ("", markdown_text(note))]
        summary = baseline_summary(table)
        if summary is not None:
            out += ["", *(markdown_text(line) for line in summary.split("\n"))]
        if table.compared:
            out += ["", markdown_row(CHANGE_HEADERS), "|---|---|---:|---:|---:|---|---|"]
            out += [markdown_row(change_cells(row)) for row in table.compared]
        out.append("")
    return "\n".join(out)


def row_dict(row: FigureRow) -> dict[str, Any]:
    """One figure as flat data (the CSV columns, and JSON rows without the metrics)."""
    rec, comp = row.record, row.comparison
    return {
        "group": row.group, "run_id": row.run_id, "timestamp": rec.timestamp, "case": row.case,
        "column": row.column, "backend": rec.backend, "variant": rec.variant, "device": rec.device,
        "dtype": rec.dtype, "median_s": rec.median_s, "iqr_s": rec.iqr_s, "min_s": rec.min_s,
        "repeats": rec.repeats, "ratio_to_fastest": row.ratio, "noisy": rec.noisy,
        "busy": is_busy(rec), "others_cores": rec.contention.get("others_cores"),
        "contention_unknown": rec.contention.get("unknown"),
        "compile_s": rec.compile_s,
        "baseline_run_id": comp.baseline_run_id if comp else None,
        "baseline_median_s": comp.baseline_median_s if comp else None,
        "change_pct": comp.change_pct if comp else None,
        "verdict": comp.verdict if comp else None,
        "test": comp.method if comp else None,
        "p_value": comp.p_value if comp else None,
    }


def render_csv(tables: Sequence[ReportTable]) -> str:
    """One line per figure; metrics as `metric.<name>` columns, memory figures as `memory.<name>`."""
    metrics = sorted({m for t in tables for m in t.metric_names})
    rows = [t_row for t in tables for t_row in t.rows]
    memory = list(dict.fromkeys(key for row in rows for key in row.record.memory))
    buffer = io.StringIO()
    fieldnames = (list(row_dict(rows[0])) + [f"metric.{m}" for m in metrics] + [f"memory.{m}" for m in memory]
                  if rows else [])
    writer = csv.DictWriter(buffer, fieldnames=fieldnames, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        data = row_dict(row)
        data.update({f"metric.{m}": row.record.metrics.get(m) for m in metrics})
        data.update({f"memory.{m}": row.record.memory.get(m) for m in memory})
        writer.writerow({k: "" if v is None else spreadsheet_cell(v) for k, v in data.items()})
    return buffer.getvalue()


def render_json(tables: Sequence[ReportTable]) -> str:
    """{"tables": [{group, run_id, timestamp, title, env, baseline, rows: [...]}]}."""
    return json.dumps({"tables": [
        {
            "group": t.group, "run_id": t.run_id, "timestamp": t.timestamp, "title": t.title,
            "env": t.env, "baseline": baseline_summary(t),
            "contention": contention_notes(t.records),
            "rows": [{**row_dict(r), "metrics": r.record.metrics, "memory": r.record.memory,
                      "contention": r.record.contention} for r in t.rows],
        }
        for t in tables
    ]}, indent=2)


def render_github_benchmark(tables: Sequence[ReportTable]) -> str:
    """github-action-benchmark's `customSmallerIsBetter` input: [{name, unit, value, range, extra}].

    The name (`group/case/column`) is a figure's identity from run to run, and the
    unit is always seconds so that a figure's values stay comparable between runs.
    Each memory figure is an entry of its own, `group/case/column/<memory key>` in bytes.
    """
    entries: list[dict[str, Any]] = []
    for table in tables:
        for row in table.rows:
            if row.record.median_s:
                entries.append({
                    "name": f"{row.group}/{row.case}/{row.column}",
                    "unit": "s",
                    "value": row.record.median_s,
                    "range": f"± {row.record.iqr_s or 0.0:.3g}",
                    "extra": "\n".join([f"run {row.run_id} · {row.record.repeats} samples"
                                        + (" · " + NOISY_NOTE.removeprefix("~ ") if row.record.noisy else "")
                                        + (" · taken on a busy machine" if is_busy(row.record) else ""),
                                        env_header(row.record.env)]),
                })
            entries += [
                {"name": f"{row.group}/{row.case}/{row.column}/{key}", "unit": "bytes", "value": value,
                 "extra": f"run {row.run_id} · {row.record.memory.get('memory_method', '')}"}
                for key in SHOWN_BYTES if type(value := row.record.memory.get(key)) is int
            ]
    return json.dumps(entries, indent=2, ensure_ascii=False)


# ------------------------------------------------------------ history ---

def runs_that_fit(history: GroupHistory, width: int, name_width: int) -> list[RunInfo]:
    """The runs a terminal of `width` characters shows side by side: every run, or the first and the latest
    ones (the latest alone where two do not fit)."""
    run_width = 3 + max([SHORTEST_CELL, *(len(part) for run in history.runs for part in history.label_parts(run))])
    fit = max(1, (width - 1 - (name_width + 3) - CHANGE_COLUMN_WIDTH) // run_width)
    runs = history.runs
    if len(runs) <= fit:
        return runs
    return [runs[0], *runs[len(runs) - fit + 1:]] if fit > 1 else runs[-1:]


def render_history_rich(histories: Sequence[GroupHistory], console: Console) -> None:
    for history in histories:
        # The figure names are what a reader looks for: keep them whole (up to 48 characters).
        name_width = min(max((len(s.name) for s in history.series), default=6), 48)
        runs = runs_that_fit(history, console.width, name_width)
        shown = ("" if len(runs) == len(history.runs) else
                 f"the latest of {len(history.runs)} runs" if len(runs) == 1 else
                 f"the first and the latest {len(runs) - 1} of {len(history.runs)} runs")
        caption = history.legend + (f" Shown: {shown}, as many as this terminal's width holds; "
                                    "--format csv, json or html shows every run." if shown else "")
        table = Table(title=literal(f"{history.group} · history over {len(history.runs)} run(s)"),
                      title_justify="left", caption=literal(caption), caption_justify="left")
        rows = history_cells(history, runs)
        # A run's label one part a line (each part printed literally; the line breaks are the table's).
        headers = ["figure", *("\n".join(literal(part) for part in history.label_parts(run)) for run in runs),
                   "last vs first"]
        for i, header in enumerate(headers):
            table.add_column(header, justify="left" if i == 0 else "right", min_width=name_width if i == 0 else None)
        for cells in rows:  # a figure and its marks ('1.2 ms ~ busy') wrap only between them
            table.add_row(literal(cells[0]), *(pieces_of(c) for c in cells[1:]))
        console.print(table)
        console.print()


def render_history_markdown(histories: Sequence[GroupHistory]) -> str:
    out: list[str] = []
    for history in histories:
        headers = history_headers(history)
        out += [f"### {markdown_text(history.group)} · history over {len(history.runs)} run(s)", "",
                markdown_text(history.legend), "", markdown_row(headers), "|---|" + "---:|" * (len(headers) - 1)]
        out += [markdown_row(cells) for cells in history_cells(history)]
        out.append("")
    return "\n".join(out)


def render_history_csv(histories: Sequence[GroupHistory]) -> str:
    """Long form: one line per figure and run."""
    rows = [row for history in histories for row in history_rows(history)]
    fieldnames = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")  # lists, not dicts: DictWriter checks every row's keys
    writer.writerow(fieldnames)
    writer.writerows(["" if (value := row.get(key)) is None else spreadsheet_cell(value) for key in fieldnames]
                     for row in rows)
    return buffer.getvalue()


def render_history_json(histories: Sequence[GroupHistory]) -> str:
    """{"histories": [{group, varying, runs: [{run_id, timestamp, label, env}], rows: [...]}]}."""
    return json.dumps({"histories": [
        {
            "group": h.group, "varying": h.varying,
            "runs": [{"run_id": r.run_id, "timestamp": r.timestamp, "label": h.label(r), "env": r.env}
                     for r in h.runs],
            "rows": history_rows(h),
        }
        for h in histories
    ]}, indent=2)
