"""`python main.py report`: tables, regressions and charts from the results file.

This module imports only click, pydantic and light `src` modules, so that
`report --help` is instant; rich, scipy and matplotlib load when they are used.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from jax_benchmarks.errors import DataError, interrupt_signal, interrupted
from jax_benchmarks.store.results import DEFAULT_RESULTS, Record, SkippedLines, complete_records
from jax_benchmarks.cli.plots import PLOTS_DIR
from jax_benchmarks.settings import OptionError, parse_settings, readable_path, settings_options, writable_dir
from jax_benchmarks.groups import BENCHMARK_GROUPS, BenchmarkGroup
from jax_benchmarks.report.select import PREVIOUS, Filters, is_path_like

if TYPE_CHECKING:  # rich-based modules load only when a report is made
    from jax_benchmarks.report.history import GroupHistory
    from jax_benchmarks.report.rows import FigureRow, ReportTable

GroupName = BenchmarkGroup  # the one list of groups: src/jax_benchmarks/groups.py
Format = Literal["table", "markdown", "csv", "json", "html", "github-benchmark"]
MAX_LISTED = 5


class ReportSettings(BaseModel):
    """What to report, in which format, against which baseline."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: str | None = Field(
        None, min_length=1,
        description="Report this run (its id or a unique prefix) instead of the latest run of each group.",
    )
    group: GroupName | None = Field(None, description="Only this group.")
    backend: str | None = Field(None, min_length=1, description="Only this backend (numpy, pytorch, jax, flax, ...).")
    output_format: Format = Field(
        "table", description="Output format; everything but table prints only the data on stdout "
                             "(html: one self-contained page with the charts embedded; github-benchmark: "
                             "github-action-benchmark's customSmallerIsBetter JSON).",
        json_schema_extra={"option": "--format"},
    )
    markdown: bool = Field(False, description="Same as --format markdown (hidden: the old name).",
                           json_schema_extra={"hidden": True})
    baseline: str | None = Field(
        None, min_length=1,
        description="Compare with a run id, the latest runs of another results file (PATH), "
                    "or 'previous' (each group's run before the reported one on the same machine).",
    )
    fail_on_regression: float | None = Field(
        None, ge=0, le=10_000,
        description="Exit 1 when a figure is slower than the baseline by more than this many percent, "
                    "clearly beyond the variation between rounds (both runs need --rounds 3 or more; "
                    "needs --baseline).",
    )
    plot: bool = Field(False, description="Draw bar charts and box plots of the samples as PNG under data/plots/ "
                                          "and print their paths.")
    history: bool = Field(
        False, description="Every figure over all runs of the results file, runs labelled by git commit and the "
                           "library versions that changed (with --format html: added to the page).",
    )
    scaling: bool = Field(
        False, description="mnist training images/s by process count: speed-up and scaling efficiency "
                           "against the 1-process run.",
    )
    results: Path = Field(DEFAULT_RESULTS, description="JSON-lines results file to read.")

    @field_validator("results")
    @classmethod
    def _results_readable(cls, value: Path) -> Path:
        if not value.exists():
            raise ValueError(f"{value} does not exist: no results yet, run a benchmark first "
                             "(e.g. `python main.py xla all`)")
        if value.is_dir():
            raise ValueError(f"{value} is a directory, not a results file")
        return readable_path(value)

    @field_validator("baseline")
    @classmethod
    def _baseline_file_readable(cls, value: str | None) -> str | None:
        if value is not None and value != PREVIOUS and is_path_like(value):
            path = readable_path(Path(value))
            if path.is_dir():
                raise ValueError(f"{value} is a directory, not a results file")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ReportSettings:
        if self.markdown and self.output_format not in ("table", "markdown"):
            raise OptionError("--markdown", f"conflicts with --format {self.output_format}; give only one of them")
        if self.history and self.format == "github-benchmark":
            raise OptionError("--history", "has no github-benchmark form (that format is one run per file)")
        # Only the HTML page shows the tables of the reported runs next to the history.
        for option, value in (("--run", self.run), ("--baseline", self.baseline)):
            if self.history and value is not None and self.format != "html":
                raise OptionError("--history", f"shows every run instead of the tables; {option} needs --format html")
        if self.fail_on_regression is not None and self.baseline is None:
            raise OptionError("--fail-on-regression", "needs --baseline RUN_ID|PATH|previous to compare with")
        if self.plot:
            writable_dir(PLOTS_DIR, "plots")
        return self

    @property
    def format(self) -> Format:
        return "markdown" if self.markdown else self.output_format


class RegressionFound(click.ClickException):
    """Figures got slower than the baseline beyond the allowed percentage: exit 1 (for CI)."""

    exit_code = 1


def warn(message: str) -> None:
    click.echo(f"warning: {message}", err=True)


def report(settings: ReportSettings) -> None:
    """Select the runs, compare them with the baseline, print, plot, and fail on regressions."""
    from jax_benchmarks.report import select
    from jax_benchmarks.report.history import build_histories
    from jax_benchmarks.report.rows import build_table, judge_tables, order_tables

    skipped = SkippedLines()  # bad lines of every phase, reported once per file
    try:
        records = select.load(settings.results, warn, skipped)
        # The index lives as long as the report: frozen, the cyclic collector stops rescanning its ~10⁵
        # objects each time the report allocates more (grouping runs took twice as long with it).
        gc.freeze()
        filters = Filters(run=settings.run, group=settings.group, backend=settings.backend)
        if settings.scaling:  # a view of its own: images/s by process count (the bad-line summary follows it)
            report_scaling(complete_records(
                select.apply_filters(records, Filters(group="mnist", backend=settings.backend)), warn, skipped),
                settings.format)
            return
        chosen = select.apply_filters(records, filters)
        runs = select.split_runs(chosen) if settings.run else select.latest_runs(chosen)
        baselines = Baselines(settings, records, filters, skipped)
        shown = [(run, *baselines.for_run(run)) for run in runs]
        # Only now are the shown records (and their baselines) read in full; a corrupt one drops out.
        needed = [r for run, base, _ in shown for r in (*run, *(base or ()))]
        valid = {id(r) for r in complete_records(needed, warn, skipped)}
        # --history draws every run of the selected groups and backends: those are read in full too.
        history_records = (complete_records(select.apply_filters(records, filters.every_run()), warn, skipped)
                           if settings.history else [])
    finally:
        for summary in skipped.summaries():
            warn(summary)
    tables = order_tables([
        build_table([r for r in run if id(r) in valid], [r for r in base if id(r) in valid] if base else base, note)
        for run, base, note in shown if any(id(r) in valid for r in run)
    ], list(BENCHMARK_GROUPS))
    if not tables:
        raise DataError(f"no valid benchmark records to show in {settings.results}")
    # All compared figures form one family (false discovery rate), judged against the gate's threshold.
    tables = judge_tables(tables, settings.fail_on_regression or 0.0)

    to_stdout = settings.format == "table"
    histories = build_histories(history_records, list(BENCHMARK_GROUPS)) if settings.history else []
    if settings.format == "html":
        from jax_benchmarks.report.page import build_page

        click.echo(build_page(tables, histories, str(settings.results)), nl=False)
    elif settings.history:
        emit_history(histories, settings.format)
    else:
        emit(tables, settings.format)
    if settings.plot:
        from jax_benchmarks.report.plot import plot_history, plot_spread, plot_table

        paths = [plot(table) for table in tables for plot in (plot_table, plot_spread)]
        paths += [plot_history(history) for history in histories]
        for path in paths:
            if path is not None:
                click.echo(f"chart: {path}", err=not to_stdout)
    if settings.fail_on_regression is not None:
        check_regressions([row for t in tables for row in t.rows], settings.fail_on_regression)


# ------------------------------------------- baseline environment (issue 16) ---

def environment_note(run: Sequence[Record], base: Sequence[Record]) -> str | None:
    """The environment differences of two compared runs, listed above the verdicts; warns on another machine
    and on other framework versions."""
    from jax_benchmarks.report.envdiff import differences, framework_changes, machine_text, same_machine

    now, before = run[-1].env, base[-1].env
    lines = []
    if not same_machine(now, before):
        message = (f"the baseline was measured on another machine ({machine_text(before)}; now "
                   f"{machine_text(now)}): its differences are not code changes")
        warn(message)
        lines.append(f"WARNING: {message}")
    versions = framework_changes(now, before)
    if versions:
        message = (f"the baseline used other framework versions ({', '.join(versions)}): "
                   "its differences may come from them, not from code changes")
        warn(message)
        lines.append(f"WARNING: {message}")
    changed = differences(now, before)
    if changed:
        lines.append("environment differs from the baseline: " + "; ".join(changed))
    return "\n".join(lines) if lines else None


def report_scaling(records: Sequence[Record], fmt: Format) -> None:
    from jax_benchmarks.report.scaling import HEADER, cells, render_text, scaling_rows

    rows = scaling_rows(records)
    if not rows:
        raise click.UsageError("no mnist training epochs in the results file: run e.g. "
                               "`python main.py mnist pytorch` and `... --launch-local 2` first")
    if fmt != "table":
        click.echo(render_text(rows, fmt))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="mnist training: images/s by process count (median of process 0's epochs)")
    for i, name in enumerate(HEADER):
        table.add_column(name, justify="right" if 2 <= i <= 5 else "left", no_wrap=i not in (1, 6))
    for row in rows:
        table.add_row(*cells(row))
    console = Console(highlight=False)
    console.print(table)
    console.print("speed-up: images/s ÷ the 1-process run's; efficiency: speed-up ÷ devices (1.00 = perfect)")


class Baselines:
    """The baseline records of each reported run (loaded once)."""

    def __init__(self, settings: ReportSettings, records: Sequence[Record], filters: Filters,
                 skipped: SkippedLines | None = None) -> None:
        from jax_benchmarks.report import select

        self.value = settings.baseline
        self.pool: list[Record] = []
        self.history: select.RunHistory | None = None
        if self.value == PREVIOUS:
            self.history = select.RunHistory(select.apply_filters(records, filters.every_run()))
        elif self.value is not None:
            self.pool = select.baseline_records(self.value, records, filters, warn, skipped)

    def for_run(self, run: Sequence[Record]) -> tuple[list[Record] | None, str | None]:
        """(baseline records or None, the note printed under the table)."""
        group = run[0].group
        if self.value is None:
            return None, None
        if self.history is not None:
            from jax_benchmarks.report.envdiff import same_machine

            now = run[-1].env
            # Every record of a run was measured on one machine: one test per earlier run, latest first.
            base = self.history.previous(run, lambda earlier: same_machine(earlier[-1].env, now))
            if not base:
                elsewhere = len(self.history.previous(run)) > 0
                return None, f"no earlier {group} run on this machine to compare with" + (
                    " (there are runs from other machines: pass one's run id to compare anyway)" if elsewhere else "")
        else:
            base = [r for r in self.pool if r.group == group]
            if not base:
                return None, f"the baseline has no {group} figures"
        ids = ", ".join(dict.fromkeys(r.run_id for r in base))
        env_note = environment_note(run, base)
        return base, (env_note + "\n" if env_note else "") + f"change against run {ids}"


def emit(tables: Sequence[ReportTable], fmt: Format) -> None:
    from jax_benchmarks.report import render

    if fmt == "table":
        from rich.console import Console

        render.render_rich(tables, Console(highlight=False))
        return
    renderers = {"markdown": render.render_markdown, "csv": render.render_csv, "json": render.render_json,
                 "github-benchmark": render.render_github_benchmark}
    click.echo(renderers[fmt](tables), nl=fmt in ("json", "github-benchmark"))


# ---------------------------------------------------------------- history (issue 17) ---

def emit_history(histories: Sequence[GroupHistory], fmt: Format) -> None:
    from jax_benchmarks.report import render

    if fmt == "table":
        from rich.console import Console

        render.render_history_rich(histories, Console(highlight=False))
        return
    renderers = {"markdown": render.render_history_markdown, "csv": render.render_history_csv,
                 "json": render.render_history_json}
    click.echo(renderers[fmt](histories), nl=fmt == "json")


# ------------------------------------------------------------------------------------------

def check_regressions(rows: Sequence[FigureRow], threshold_pct: float) -> None:
    from jax_benchmarks.report.compare import MIN_ROUNDS, is_regression

    compared = [row for row in rows if row.comparison is not None]
    if not compared:
        warn("--fail-on-regression: no figure had a baseline to compare with")
        return
    unjudged = [row for row in compared if row.comparison is not None and row.comparison.log_ratio is None]
    if unjudged:
        warn(f"--fail-on-regression: {len(unjudged)} of {len(compared)} figure(s) cannot be judged: too few "
             f"samples (fewer than {MIN_ROUNDS} rounds in a run; run both with --rounds {MIN_ROUNDS} or more)")
    slower = [row for row in compared if is_regression(row.comparison)]
    if not slower:
        click.echo(f"no regression: {len(compared) - len(unjudged)} figure(s) judged, none slower than the "
                   f"baseline by more than {threshold_pct:g} % beyond the variation between rounds", err=True)
        return
    listed = ", ".join(
        f"{row.group} {row.case} {row.column} {row.comparison.change_pct:+.1f} %"
        for row in slower[:MAX_LISTED] if row.comparison is not None
    )
    more = f" and {len(slower) - MAX_LISTED} more" if len(slower) > MAX_LISTED else ""
    raise RegressionFound(
        f"regression: {len(slower)} figure(s) slower than the baseline by more than {threshold_pct:g} %: {listed}{more}"
    )


@settings_options(ReportSettings)
def _report(**values: Any) -> None:
    settings = parse_settings(ReportSettings, values)
    try:
        report(settings)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: one line, not Click's "Aborted."
        raise interrupted("Interrupted: the report was not finished.", interrupt_signal(exc)) from None


# The generated options say TEXT/FLOAT; these read better in --help.
METAVARS = {"run": "RUN_ID", "baseline": "RUN_ID|PATH|previous", "fail_on_regression": "PCT", "backend": "NAME"}
for _param in _report.__click_params__:  # type: ignore[attr-defined]
    if _param.name in METAVARS:
        _param.metavar = METAVARS[_param.name]


cli = click.Command(
    "report",
    callback=_report,
    params=_report.__click_params__,  # type: ignore[attr-defined]
    context_settings={"help_option_names": ["-h", "--help"]},
    help="""Tables, regressions and charts from the results file.

    By default: the latest run of each group, one table per group (rows =
    cases, columns = backends) with median ± IQR, the ratio to the fastest,
    and ~ on noisy figures.

    \b
    Examples:
      python main.py report --group xla --format markdown
      python main.py report --baseline previous --fail-on-regression 10
      python main.py report --plot
      python main.py report --format html --history > report.html
      python main.py report --scaling
    """,
)
