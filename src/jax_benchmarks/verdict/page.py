"""The verdict as a self-contained HTML page and as markdown (for a README or a pull request).

A plain answer first (three to five lines, verdict/answer.py), the scale and machine as a banner and one
summary chart of the comparisons with their intervals; then the findings, one sentence each; the evidence (a table, the box plots of the samples, the records'
run ids and case names) is one click away in a <details> block. Then what the figures were measured
on: the machine, the versions, the precision policy and the dates. The HTML reuses the report's CSS,
image embedding and environment table (`jax_benchmarks.report.page`); every chart is a data: URI, so the
page needs no network. This module only builds text: the charts arrive as PNG bytes.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from jax_benchmarks.cli.console import markdown_row, markdown_text
from jax_benchmarks.measure.breakdown import breakdowns_of
from jax_benchmarks.report.page import CSS, Chart, environment_section, image
from jax_benchmarks.report.plot import machine_title
from jax_benchmarks.report.rows import ReportTable
from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.verdict.answer import SCALE_BANNERS, Answer, how_judged, plain_answer
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT, MAX_ROUNDS
from jax_benchmarks.verdict.findings import Finding
from jax_benchmarks.verdict.sequential import counted, counted_undecided, decided_count, rounds_to_settle

PAGE_TITLE = "jax-benchmarks verdict"
QUESTION = "Is JAX worth it on this machine, for my kind of work?"
VERDICT_CSS = """
ol.findings { padding-left: 1.4rem; }
ol.findings > li { margin: .5rem 0; }
details > summary { cursor: pointer; }
details[open] > summary { margin-bottom: .4rem; }
.status { display: inline-block; min-width: 6.5rem; font-size: .75rem; font-weight: 600; text-transform: uppercase;
          color: #59636e; }
.status-found { color: #1a7f37; }
.status-same { color: #0969da; }
.status-undecided, .status-not-compared, .status-missing { color: #9a6700; }
p.source { color: #59636e; font-size: .8rem; }
table.side { width: 100%; }
table.side td { width: 50%; }
body { overflow-wrap: anywhere; }
.answer { font-size: 1.1rem; line-height: 1.45; border-left: 4px solid #1a7f37; padding: .2rem .9rem; margin: .8rem 0; }
.answer p { margin: .3rem 0; }
.answer p.how { font-size: .8rem; color: #59636e; }
.banner { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: .4rem .8rem; }
.summary img { max-width: 100%; height: auto; }
table.env { table-layout: fixed; width: 100%; }
table.env td, table.env th { word-break: break-word; overflow-wrap: anywhere; }
"""
STATUS_WORDS = {"found": "finding", "same": "the same", "undecided": "undecided", "not compared": "not compared",
                "missing": "missing", "measured": "measured"}


@dataclass(frozen=True)
class Machine:
    """One machine's findings and what they were measured on."""

    name: str
    findings: Sequence[Finding]
    env: Mapping[str, Scalar]
    records: Sequence[Record]
    tables: Sequence[ReportTable] = ()
    charts: Mapping[str, Sequence[Chart]] = field(default_factory=dict)  # finding key -> its charts
    answers: Sequence[Answer] = ()  # JAX against the fastest other framework, per finding that has both
    summary: Chart | None = None  # the answers' chart (HTML only)
    margin_pct: float = DEFAULT_MARGIN_PCT  # the margin ±m % every comparison was decided at
    # The page's scale was derived from the records' options (`verdict.scale.derived_scale`): records measured before
    # 2026-11-27 do not name it.
    scale_derived: bool = False
    other_machines: tuple[str, ...] = ()  # the store's runs of other machines, left out (`findings.one_machine`)


def banner(machine: Machine, scale: str | None) -> str:
    """The scale, how the rounds were taken where they were taken in turns, and the machine, e.g. 'quick scale: a smoke
    test, not a result · AMD EPYC (2 cores), no GPU'."""
    parts = [SCALE_BANNERS.get(scale, f"{scale} scale") + (DERIVED if machine.scale_derived else "")] if scale else []
    if any(record.env.get("turns") is True for record in machine.records):
        parts.append(IN_TURNS)
    return " · ".join([*parts, machine.name])


# Records of rounds taken in turns (`verdict --turns`, jax_benchmarks.measure.turns) carry env `turns`.
IN_TURNS = "rounds taken in turns (each framework in its own process, one timed window at a time)"


DERIVED = " (derived from the sizes the records were measured at: they do not name their scale)"


def decided_line(machine: Machine) -> str:
    """'Decided: 9 of 12 comparisons; 3 stayed undecided (at most 5 rounds a figure); 2 of them would need more
    than 100 rounds a side here.' (the last clause where some would: more budget would not decide those)"""
    wide = undecided_keys(machine.answers)
    decided, undecided = decided_count(machine.findings, wide)
    rounds = max((r.round_index + 1 for r in machine.records if r.round_index is not None), default=1)
    line = (f"Decided: {decided} of {decided + undecided} comparisons; {undecided} stayed undecided "
            f"(at most {rounds} round{'' if rounds == 1 else 's'} a figure)")
    answer_of = {a.key: a for a in machine.answers}
    busy = busy_count(machine.findings, answer_of, wide)
    if busy:
        line += (f"; {busy} of them because their figures were taken while other processes held the cores (not "
                 "judged)")
    beyond = sum(1 for f in machine.findings if counted(f) and rounds_to_settle(f, answer_of.get(f.key)) is None)
    if beyond:
        line += (f"; {beyond} of them would need more than {MAX_ROUNDS} rounds a side here (a ratio within the "
                 "rounds' noise of the margin)")
    return line + "."


def busy_count(findings: Sequence[Finding], answer_of: Mapping[str, Answer], undecided: Collection[str]) -> int:
    """The counted findings left undecided because a comparison they rest on (or their answer) was taken on a busy
    machine: figures never judged, so no number of quiet rounds elsewhere would have decided them."""
    def busy(f: Finding) -> bool:
        answer = answer_of.get(f.key)
        return any(d.busy for d in f.decisions) or (answer is not None and answer.contrast.decision.busy)
    return sum(1 for f in findings if counted_undecided(f, undecided) and busy(f))


def dates(records: Sequence[Record]) -> str:
    days = sorted({r.timestamp[:10] for r in records})
    return "no records" if not days else days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


# A CPU computes float32 in IEEE arithmetic whatever --precision and the frameworks' TF32 settings say
# (hardware/gpu_policy.py), so a CPU record's precision fields describe nothing that was measured.
NOT_ON_A_CPU = "not applicable on a CPU (float32 is IEEE)"


def precision_text(records: Sequence[Record], env: Mapping[str, Scalar]) -> str:
    """The precision policy the records ran under: the run's --precision and what each framework reported, read
    from the latest GPU record's env (`env`, the machine's, where no record says its device); on a CPU, that it
    does not apply."""
    on_gpu = [r for r in records if r.device != "cpu"]
    if records and not on_gpu:
        return NOT_ON_A_CPU
    if on_gpu:
        env = max(on_gpu, key=lambda r: r.timestamp).env
    parts = [f"float32 products and convolutions: {env.get('precision') or 'not recorded'}"]
    for key, name in (("jax_matmul_precision", "JAX default matmul precision"),
                      ("torch_matmul_precision", "PyTorch float32 matmul")):
        if key in env:
            parts.append(f"{name}: {env.get(key) or 'default'}")
    if len(on_gpu) < len(records):
        parts.append("not applicable to the CPU records (float32 is IEEE)")
    return "; ".join(parts)


def about_lines(machine: Machine) -> list[str]:
    """Machine, versions, precision policy, BLAS, dates and runs: what a reader needs to trust the figures."""
    env = machine.env
    runs = sorted({r.run_id for r in machine.records})
    return [
        f"Machine: {machine_title(dict(env))}",
        f"BLAS (NumPy, as threadpoolctl sees it): {env.get('blas') or 'not recorded'}",
        f"Precision policy: {precision_text(machine.records, env)}",
        f"Measured: {dates(machine.records)} · run(s) {', '.join(runs) or 'none'} · git {env.get('git_commit') or '?'}",
        *([other_machines_line(machine.other_machines)] if machine.other_machines else []),
    ]


def other_machines_line(runs: Sequence[str]) -> str:
    """What a page built from a store of several machines left out, and how to see the others."""
    shown = ", ".join(runs[:3]) + (", …" if len(runs) > 3 else "")
    return (f"Left out: {len(runs)} run(s) of another machine in the same store ({shown}): a page judges one "
            "machine's runs, the latest run's; --run RUN_ID judges another run, --against sets another machine's "
            "store beside this one")


# ------------------------------------------------------------------ HTML ---

def _cell_row(cells: Sequence[str], tag: str = "td") -> str:
    return "<tr>" + "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in cells) + "</tr>"


def evidence_table(finding: Finding) -> str:
    if not finding.rows:
        return ""
    return ('<table class="evidence">' + _cell_row(finding.headers, "th")
            + "".join(_cell_row(row) for row in finding.rows) + "</table>"
            + "".join(f'<p class="source">{html.escape(note)}</p>' for note in finding.notes))


def finding_item(finding: Finding, charts: Sequence[Chart], undecided: bool = False) -> str:
    """One finding; `undecided` (its answer's interval is too wide to tell anything) overrides its status."""
    status = html.escape("undecided" if undecided else STATUS_WORDS[finding.status])
    cls = "status status-" + ("undecided" if undecided else finding.status.replace(" ", "-"))
    body = [evidence_table(finding), *(image(chart) for chart in charts),
            *(f'<p class="source">Where the step\'s time went (--profile): {html.escape(line)}</p>'
              for line in breakdowns_of(finding.records)),
            f'<p class="source">Records: {html.escape(finding.source)}</p>']
    return (f'<li id="{html.escape(finding.key)}"><details><summary><span class="{cls}">{status}</span> '
            f"<strong>{html.escape(finding.topic)}</strong>: {html.escape(finding.sentence)}</summary>"
            + "".join(body) + "</details></li>")


def undecided_keys(found: Sequence[Answer]) -> set[str]:
    """The findings whose answer (judged with the page's other answers) is undecided: counted undecided."""
    return {a.key for a in found
            if a.word == "undecided" and a.contrast.interval is not None and not a.contrast.decision.refused}


def findings_list(machine: Machine) -> str:
    wide = undecided_keys(machine.answers)
    items = [finding_item(f, machine.charts.get(f.key, ()), f.key in wide) for f in machine.findings]
    return '<ol class="findings">' + "".join(items) + "</ol>"


def about_section(machine: Machine, heading: str) -> str:
    lines = "".join(f'<p class="meta">{html.escape(line)}</p>' for line in about_lines(machine))
    return f"<h2>{html.escape(heading)}</h2>{lines}"


def side_by_side(machines: Sequence[Machine]) -> str:
    """Per topic: each machine's sentences, one column a machine."""
    topics = list(dict.fromkeys(f.topic for machine in machines for f in machine.findings))
    rows = [_cell_row(["", *(machine.name for machine in machines)], "th")]
    for topic in topics:
        cells = [" ".join(f.sentence for f in machine.findings if f.topic == topic) or "—"
                 for machine in machines]
        rows.append(_cell_row([topic, *cells]))
    return '<table class="side">' + "".join(rows) + "</table>"


def between_heading(here: Machine, there: Machine, others: int) -> str:
    return "Between the two machines" if others == 1 else f"Between {here.name} and {there.name}"


def render_html(here: Machine, others: Sequence[Machine] = (), across: Sequence[Finding] = (),
                fleet: Finding | None = None, scale: str | None = None) -> str:
    """The whole page: findings (and each other machine's, with the ratios between it and this one; then one
    column per machine), then the environment."""
    answer = plain_answer(here.answers, here.margin_pct)
    body = [f"<h1>{html.escape(QUESTION)}</h1>",
            f'<p class="banner">{html.escape(banner(here, scale))}</p>',
            f'<p class="meta">{html.escape(how_judged(here.margin_pct))}</p>',
            f'<p class="meta">{html.escape(decided_line(here))}</p>',
            '<div class="answer">' + "".join(f"<p>{html.escape(line)}</p>" for line in answer[:-1])
            + f'<p class="how">{html.escape(answer[-1])}</p></div>']
    if here.summary is not None:
        body.append(f'<div class="summary">{image(here.summary)}</div>')
    body += [f"<h2>Findings on {html.escape(here.name)}</h2>",
             '<p class="meta">Each finding is one sentence computed from the records; open it for the evidence. '
             "An interval wider than 10× is undecided.</p>",
             findings_list(here),
             "<h3>What was measured</h3>",
             *(f'<p class="meta">{html.escape(line)}</p>' for line in about_lines(here))]
    for there, between in zip(others, across, strict=True):
        body += [f"<h2>Findings on {html.escape(there.name)}</h2>", findings_list(there),
                 f"<h2>{html.escape(between_heading(here, there, len(others)))}</h2>",
                 '<ol class="findings">' + finding_item(between, ()) + "</ol>"]
    if fleet is not None:
        body += ["<h2>One column per machine</h2>", f"<p>{html.escape(fleet.sentence)}</p>", evidence_table(fleet)]
    if others:
        body += ["<h2>Side by side</h2>", side_by_side([here, *others]),
                 *(about_section(there, f"About {there.name}") for there in others)]
    if here.tables:  # every environment field: collapsed, at the bottom
        body.append("<details><summary>Environment of the runs (every field)</summary>"
                    + environment_section(here.tables) + "</details>")
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request: the page needs nothing from outside
        f"<title>{html.escape(PAGE_TITLE)}</title>",
        f"<style>{CSS}{VERDICT_CSS}</style>",
        "</head><body>",
        *body,
        "</body></html>",
        "",
    ])


# -------------------------------------------------------------- markdown ---

def md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A markdown table of text (data and the sentences made from it), each cell shown exactly as it reads."""
    return [markdown_row(headers), "|" + "---|" * len(headers), *(markdown_row(row) for row in rows)]


def findings_table(findings: Sequence[Finding]) -> list[str]:
    """The headline table: question, answer here, and the records it comes from."""
    return md_table(("question", "answer here", "records"), [(f.topic, f.sentence, f.source) for f in findings])


def render_markdown(here: Machine, others: Sequence[Machine] = (), across: Sequence[Finding] = (),
                    fleet: Finding | None = None, scale: str | None = None) -> str:
    """The page in markdown. Every line of text that holds data (the answer, the machine, the findings, the run
    ids) goes through `markdown_text`: a CPU name or a case cannot add a tag, a link or emphasis to a page
    pasted into a pull request; the markup is this function's."""
    md = markdown_text
    answer = plain_answer(here.answers, here.margin_pct)
    lines = [f"## {QUESTION}", "", *(md(line) for line in answer[:-1]), "", f"> **{md(banner(here, scale))}**", "",
             md(how_judged(here.margin_pct)), "", md(decided_line(here)), ""]
    lines += [f"{md(line)}  " for line in about_lines(here)]
    if scale:
        lines.append(f"Scale: `verdict --scale {scale}`{md(DERIVED) if here.scale_derived else ''}  ")
    lines += ["", md(answer[-1]), "", f"### Findings on {md(here.name)}", "", *findings_table(here.findings), ""]
    # The breakdowns of profiled records (`--profile`), as the HTML page shows them in each finding's evidence.
    profiled = [(f.topic, line) for f in here.findings for line in breakdowns_of(f.records)]
    if profiled:
        lines += ["### Where the step's time went (--profile)", "", *md_table(("question", "breakdown"), profiled), ""]
    for finding in here.findings:
        if finding.rows_are_the_answer and finding.rows:
            lines += [f"### {md(finding.topic)}", "", *md_table(finding.headers, finding.rows), "",
                      *(f"{md(note)}  " for note in finding.notes), ""]
    for there, between in zip(others, across, strict=True):
        lines += [f"### Findings on {md(there.name)}", "", *[f"{md(line)}  " for line in about_lines(there)], "",
                  *findings_table(there.findings), "",
                  f"### {md(between_heading(here, there, len(others)))}", "", md(between.sentence), "",
                  *md_table(between.headers, between.rows), ""]
    if fleet is not None:
        lines += ["### One column per machine", "", md(fleet.sentence), "", *md_table(fleet.headers, fleet.rows), ""]
    lines += ["The regression gate's test: fastest sample per round, Welch, Benjamini–Hochberg.", ""]
    return "\n".join(lines)


def is_verdict_page(head: bytes) -> bool:
    """The first bytes of a file are those of a page this module writes (HTML or markdown): a file `verdict
    --output` may replace without --force."""
    text = head.lstrip().decode("utf-8", "replace")
    return ((text.startswith("<!DOCTYPE html>") and f"<title>{html.escape(PAGE_TITLE)}</title>" in text)
            or text.startswith(f"## {QUESTION}\n"))
