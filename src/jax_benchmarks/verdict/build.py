"""From records to the page: pick the runs, compute the findings, draw the box plots, render."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Literal

from jax_benchmarks.groups import BENCHMARK_GROUPS
from jax_benchmarks.report.page import Chart
from jax_benchmarks.report.rows import build_table, order_tables
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.against import against_finding, fleet_finding, machine_name
from jax_benchmarks.verdict.answer import answers, plain_answer
from jax_benchmarks.verdict.chart import summary_chart
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT
from jax_benchmarks.verdict.findings import (FailedRound, Finding, all_findings, latest_runs, one_machine,
                                             without_failed)
from jax_benchmarks.verdict.page import Machine, decided_line, other_machines_line, render_html, render_markdown
from jax_benchmarks.verdict.scale import derived_scale


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


def machine(records: Sequence[Record], run_id: str | None, target: float | None, draw: bool,
            margin_pct: float = DEFAULT_MARGIN_PCT,
            failed: Sequence[FailedRound] = ()) -> tuple[Machine, Mapping[str, list[Record]]]:
    records, other_machines = one_machine(records, run_id)
    chosen = latest_runs(without_failed(records, run_id, failed), run_id)
    findings = all_findings(chosen, target, margin_pct, failed, run_id)
    shown = [r for rs in chosen.values() for r in rs]
    env = max(shown, key=lambda r: r.timestamp).env if shown else {}
    tables = order_tables([build_table(rs) for rs in chosen.values()], BENCHMARK_GROUPS)
    found = answers(findings, margin_pct)
    summary = summary_chart(found) if draw else None
    return Machine(machine_name(env), findings, env, shown, tables, box_plots(findings) if draw else {},
                   found, summary, margin_pct, other_machines=other_machines), chosen


def distinct_name(machine: Machine, taken: Sequence[str], store: str | None) -> Machine:
    """The machine under a name no earlier column has: its store's name added where two machines share a name
    (two stores of one machine)."""
    if machine.name not in taken:
        return machine
    return dataclasses.replace(machine, name=f"{machine.name} ({store or 'the --against records'})")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The page, and what the terminal says of it: the plain answer's lines (without the line on how it was
    judged, which the page gives) and the decided count, the same text as the page's."""

    page: str
    answer: Sequence[str]
    decided: str
    left_out: str = ""  # the page's line on the store's runs of other machines, where it left some out


def build_page(here_records: Sequence[Record], others: Sequence[Sequence[Record]] | None, run_id: str | None,
               output_format: Literal["html", "markdown"], target: float | None = None,
               scale: str | None = None, stores: Sequence[str] = (), margin_pct: float = DEFAULT_MARGIN_PCT) -> str:
    """The page of `here_records` (the --from store or the measuring run) and of each `--against` store's records
    in `others` (`stores`: those stores as shown, a URL's password hidden), each against the first."""
    return build_verdict(here_records, others, run_id, output_format, target, scale, stores, margin_pct).page


def build_verdict(here_records: Sequence[Record], others: Sequence[Sequence[Record]] | None, run_id: str | None,
                  output_format: Literal["html", "markdown"], target: float | None = None,
                  scale: str | None = None, stores: Sequence[str] = (),
                  margin_pct: float = DEFAULT_MARGIN_PCT, failed: Sequence[FailedRound] = ()) -> Verdict:
    """`build_page`'s page, with its plain answer and decided count for the terminal; `failed`: the measuring run's
    rounds that failed twice (their records are not judged; each group's findings say which)."""
    draw = output_format == "html"
    here, chosen_here = machine(here_records, run_id, target, draw, margin_pct, failed)
    theres: list[Machine] = []
    across: list[Finding] = []
    columns: list[tuple[str, Mapping[str, list[Record]]]] = [(here.name, chosen_here)]
    for index, records in enumerate(others or ()):
        there, chosen_there = machine(records, None, target, draw, margin_pct)
        there = distinct_name(there, [name for name, _ in columns], stores[index] if index < len(stores) else None)
        theres.append(there)
        across.append(against_finding(chosen_here, chosen_there, margin_pct))
        columns.append((there.name, chosen_there))
    fleet = fleet_finding(columns, margin_pct) if len(columns) > 1 else None
    if scale is None and (derived := derived_scale(here.records)) is not None:  # a page built --from
        scale, here = derived, dataclasses.replace(here, scale_derived=True)
    render = render_html if output_format == "html" else render_markdown
    answer = plain_answer(here.answers, here.margin_pct)  # its last line says how it was judged, except where there is no answer
    return Verdict(render(here, theres, across, fleet, scale), answer[:-1] or answer, decided_line(here),
                   other_machines_line(here.other_machines) if here.other_machines else "")
