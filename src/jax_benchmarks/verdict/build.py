"""From records to the page: pick the runs, compute the findings, draw the box plots, render."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from jax_benchmarks.groups import BENCHMARK_GROUPS
from jax_benchmarks.report.page import Chart
from jax_benchmarks.report.rows import build_table, order_tables
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.against import against_finding, machine_name
from jax_benchmarks.verdict.answer import answers
from jax_benchmarks.verdict.chart import summary_chart
from jax_benchmarks.verdict.findings import Finding, all_findings, latest_runs
from jax_benchmarks.verdict.page import Machine, render_html, render_markdown


def per_round(record: Record) -> Record:
    """The record as a case of its own per round: a report table keeps one record a cell (the latest round),
    and the box plots are to show every round's samples, side by side."""
    if record.round_index is None:
        return record
    return record.model_copy(update={"case": f"{record.case} · round {record.round_index + 1}"})


def box_plots(findings: Sequence[Finding]) -> dict[str, list[Chart]]:
    """Per finding with timed records: box plots of every sample, one box per round (the report's `spread_figure`)."""
    from jax_benchmarks.cli.plots import png_bytes
    from jax_benchmarks.report.plot import spread_figure

    charts: dict[str, list[Chart]] = {}
    for finding in findings:
        if not finding.records:
            continue
        figure = spread_figure(build_table([per_round(r) for r in finding.records]))
        if figure is not None:
            charts[finding.key] = [Chart(f"{finding.topic}: every sample, one box per round and framework",
                                         png_bytes(figure))]
    return charts


def machine(records: Sequence[Record], run_id: str | None, target: float | None, draw: bool) -> tuple[Machine, Mapping[str, list[Record]]]:
    chosen = latest_runs(records, run_id)
    findings = all_findings(chosen, target)
    shown = [r for rs in chosen.values() for r in rs]
    env = max(shown, key=lambda r: r.timestamp).env if shown else {}
    tables = order_tables([build_table(rs) for rs in chosen.values()], BENCHMARK_GROUPS)
    found = answers(findings)
    summary = summary_chart(found) if draw else None
    return Machine(machine_name(env), findings, env, shown, tables, box_plots(findings) if draw else {},
                   found, summary), chosen


def build_page(here_records: Sequence[Record], there_records: Sequence[Record] | None, run_id: str | None,
               output_format: Literal["html", "markdown"], target: float | None = None,
               scale: str | None = None) -> str:
    draw = output_format == "html"
    here, chosen_here = machine(here_records, run_id, target, draw)
    there = across = None
    if there_records is not None:
        there, chosen_there = machine(there_records, None, target, draw)
        if there.name == here.name:
            there = Machine(f"{there.name} (the --against records)", there.findings, there.env, there.records,
                            there.tables, there.charts, there.answers, there.summary)
        across = against_finding(chosen_here, chosen_there)
    if output_format == "html":
        return render_html(here, there, across, scale)
    return render_markdown(here, there, across, scale)
