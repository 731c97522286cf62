"""`report --format html`: one self-contained HTML page to share.

The page needs no network to be read: the CSS is inline and every chart is an
embedded PNG (`data:` URI). It shows the environment of the reported runs,
each group's comparison table (the same cells as the markdown format, noisy
figures marked), the baseline verdicts when there is a baseline, the charts
(bars and box plots of the raw samples) and, with `--history`, each figure
over the runs of the results file. This module only builds text: the charts
arrive as PNG bytes and the CLI decides where the page goes.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.store.record import Scalar
from jax_benchmarks.cli.tables import NOISY_NOTE, contention_notes, is_busy, memory_rows, metric_label, metric_texts
from jax_benchmarks.report.history import GroupHistory, history_cells, history_headers
from jax_benchmarks.report.render import (
    CHANGE_HEADERS, baseline_summary, change_cells, cell_text, env_header,
)
from jax_benchmarks.report.rows import ReportTable

PAGE_TITLE = "jax-benchmarks report"
CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto;
       max-width: 78rem; padding: 0 1.5rem; color: #1f2328; background: #fff; line-height: 1.4; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; border-bottom: 1px solid #d0d7de; padding-bottom: .3rem; margin-top: 2.2rem; }
h3 { font-size: 1rem; margin: 1.4rem 0 .4rem; }
p.meta, p.env { color: #59636e; font-size: .85rem; margin: .2rem 0 .8rem; }
table { border-collapse: collapse; font-size: .85rem; margin: .4rem 0 .8rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; vertical-align: top; }
th { background: #f6f8fa; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.metric { color: #59636e; }
.fastest { color: #1a7f37; font-weight: 600; }
.noisy { background: #fff8c5; }
.busy { background: #ffd8d3; }
.differs { background: #ddf4ff; font-weight: 600; }
.verdict-slower { color: #cf222e; font-weight: 600; }
.verdict-faster { color: #1a7f37; font-weight: 600; }
.verdict-unchanged { color: #59636e; }
.verdict-too-few-samples, .verdict-busy-machine { color: #9a6700; font-style: italic; }
figure { margin: 1rem 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #59636e; font-size: .8rem; }
"""


@dataclass(frozen=True)
class Chart:
    """A chart to embed: its PNG bytes and what it shows."""

    caption: str
    png: bytes


def image(chart: Chart) -> str:
    data = base64.b64encode(chart.png).decode("ascii")
    caption = html.escape(chart.caption)
    return (f'<figure><img alt="{caption}" src="data:image/png;base64,{data}">'
            f"<figcaption>{caption}</figcaption></figure>")


def _row(cells: Sequence[str], header: bool = False, classes: Sequence[str] = ()) -> str:
    """One <tr>; `cells` are already escaped HTML."""
    tag = "th" if header else "td"
    out = []
    for i, cell in enumerate(cells):
        cls = classes[i] if i < len(classes) and classes[i] else ""
        out.append(f'<{tag} class="{cls}">{cell}</{tag}>' if cls else f"<{tag}>{cell}</{tag}>")
    return "<tr>" + "".join(out) + "</tr>"


def environment_section(tables: Sequence[ReportTable]) -> str:
    """Every env field of the reported runs: one column per run, or one column when all agree."""
    envs: dict[str, Mapping[str, Scalar]] = {f"{t.group} · {t.run_id}": t.env for t in tables}
    distinct = {tuple(sorted(env.items(), key=lambda kv: kv[0])) for env in envs.values()}
    if len(distinct) == 1:
        envs = {"every reported run": next(iter(envs.values()))}
    keys = list(dict.fromkeys(k for env in envs.values() for k in env))
    rows = [_row(["", *(html.escape(name) for name in envs)], header=True)]
    for key in keys:
        values = [env.get(key) for env in envs.values()]
        differs = len({repr(v) for v in values}) > 1
        text = [html.escape("—" if v is None else str(v)) for v in values]
        rows.append(_row([html.escape(key), *text], classes=["", *(["differs"] * len(values) if differs else [])]))
    return '<section id="environment"><h2>Environment</h2><table class="env">' + "".join(rows) + "</table></section>"


def figures_table(table: ReportTable) -> str:
    """The comparison table: rows = cases (and their metric rows), columns = backends."""
    rows = [_row(["case", *(html.escape(c) for c in table.columns)], header=True)]
    for case in table.cases:
        cells = [table.cell(case, column) for column in table.columns]
        if any(c is not None and c.record.median_s for c in cells):
            classes = [""]
            for cell in cells:
                names = ["num"]
                if cell is not None and cell.fastest:
                    names.append("fastest")
                if cell is not None and cell.record.noisy:
                    names.append("noisy")
                if cell is not None and is_busy(cell.record):
                    names.append("busy")
                classes.append(" ".join(names))
            rows.append(_row([html.escape(case), *(html.escape(cell_text(c)) for c in cells)], classes=classes))
        for metric in table.row_metrics:
            values = metric_texts(metric, [c.record if c is not None else None for c in cells])
            if any(v is not None for v in values):
                rows.append(_row(
                    [html.escape(f"{case} · {metric_label(metric, case)}"), *(html.escape("—" if v is None else v)
                                                         for v in values)],
                    classes=["metric", *(["num metric"] * len(values))],
                ))
        for memory_row in memory_rows(case, [c.record if c is not None else None for c in cells]):
            rows.append(_row([html.escape(text) for text in memory_row],
                             classes=["metric", *(["num metric"] * len(cells))]))
    return '<table class="figures">' + "".join(rows) + "</table>"


def changes_table(table: ReportTable) -> str:
    rows = [_row([html.escape(h) for h in CHANGE_HEADERS], header=True)]
    for figure in table.compared:
        cells = change_cells(figure)
        classes = ["", "", "num", "num", "num", "verdict-" + cells[5].replace(" ", "-"), ""]
        rows.append(_row([html.escape(c) for c in cells], classes=classes))
    return '<table class="changes">' + "".join(rows) + "</table>"


def group_section(table: ReportTable, charts: Sequence[Chart]) -> str:
    parts = [f'<section class="group" id="{html.escape(table.group)}-{html.escape(table.run_id)}">',
             f"<h2>{html.escape(table.title)}</h2>",
             f'<p class="env">{html.escape(env_header(table.env))}</p>',
             figures_table(table)]
    if any(row.record.noisy for row in table.rows):
        parts.append(f'<p class="meta"><span class="noisy">{html.escape(NOISY_NOTE)}</span></p>')
    parts += [f'<p class="meta"><span class="busy">{html.escape(note)}</span></p>' for note in contention_notes(table.records)]
    summary = baseline_summary(table)
    if summary is not None:
        parts.append(f'<p class="meta baseline">{html.escape(summary)}</p>')
    if table.compared:
        parts.append(changes_table(table))
    parts += [image(chart) for chart in charts]
    parts.append("</section>")
    return "\n".join(parts)


def history_section(history: GroupHistory, charts: Sequence[Chart]) -> str:
    """Each figure of a group over the runs of the results file (a run's label: commit and versions)."""
    rows = [_row([html.escape(h) for h in history_headers(history)], header=True)]
    for cells in history_cells(history):
        rows.append(_row([html.escape(c) for c in cells], classes=["", *(["num"] * (len(cells) - 1))]))
    parts = [f'<section class="history" id="history-{html.escape(history.group)}">',
             f"<h2>{html.escape(history.group)} · history over {len(history.runs)} run(s)</h2>",
             f'<p class="meta">{html.escape(history.legend)}</p>',
             '<table class="history">' + "".join(rows) + "</table>",
             *(image(chart) for chart in charts), "</section>"]
    return "\n".join(parts)


def render_html(
    tables: Sequence[ReportTable],
    charts: Mapping[tuple[str, str], Sequence[Chart]],
    source: str,
    histories: Sequence[GroupHistory] = (),
    history_charts: Mapping[str, Sequence[Chart]] | None = None,
) -> str:
    """The whole page. `charts` is keyed by (group, run_id), `history_charts` by group."""
    body = [f"<h1>{html.escape(PAGE_TITLE)}</h1>",
            f'<p class="meta">{len(tables)} run(s) from {html.escape(source)}</p>']
    if tables:
        body.append(environment_section(tables))
    body += [group_section(t, charts.get((t.group, t.run_id), ())) for t in tables]
    body += [history_section(h, (history_charts or {}).get(h.group, ())) for h in histories]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # An empty icon: the browser asks for no favicon (the page needs nothing from outside).
        '<link rel="icon" href="data:,">',
        f"<title>{html.escape(PAGE_TITLE)}</title>",
        f"<style>{CSS}</style>",
        "</head><body>",
        *body,
        "</body></html>",
        "",
    ])


def charts_of(table: ReportTable) -> list[Chart]:
    """The bar chart and the box plots of a table (those it has figures for)."""
    from jax_benchmarks.cli.plots import png_bytes
    from jax_benchmarks.report.plot import spread_figure, table_figure

    out = []
    bars, spread = table_figure(table), spread_figure(table)
    if bars is not None:
        out.append(Chart(f"{table.group}: median per call, error bars = quartiles of the samples", png_bytes(bars)))
    if spread is not None:
        out.append(Chart(f"{table.group}: every sample (box plots)", png_bytes(spread)))
    return out


def build_page(tables: Sequence[ReportTable], histories: Sequence[GroupHistory], source: str) -> str:
    """Draw every chart and render the page."""
    from jax_benchmarks.cli.plots import png_bytes
    from jax_benchmarks.report.plot import history_figure

    history_charts: dict[str, list[Chart]] = {}
    for history in histories:
        fig = history_figure(history)
        if fig is not None:
            history_charts[history.group] = [Chart(f"{history.group}: each figure over the runs", png_bytes(fig))]
    return render_html(tables, {(t.group, t.run_id): charts_of(t) for t in tables}, source,
                       histories, history_charts)
