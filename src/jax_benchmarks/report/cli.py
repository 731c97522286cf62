"""`python main.py report`: tables, regressions and charts from the results store.

This module imports only click, pydantic and light `src` modules, so that
`report --help` is instant; rich, scipy and matplotlib load when they are used.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from jax_benchmarks.cli.choice import ProgramCommand
from jax_benchmarks.errors import DEFAULT_PROGRAM, DataError, Failed, interrupt_signal, interrupted
from jax_benchmarks.cli.plots import PLOTS_DIR
from jax_benchmarks.settings import (
    OptionError, Results, lock_timeout_field, parse_settings, readable_path, readable_store, results_field,
    settings_options, with_lock_timeout, writable_dir,
)
from jax_benchmarks.store.location import ResultsLocation, as_location
from jax_benchmarks.store.record import Record, Scalar
from jax_benchmarks.groups import BENCHMARK_GROUPS, BenchmarkGroup
from jax_benchmarks.report.select import PREVIOUS, Filters, is_path_like

if TYPE_CHECKING:  # rich-based modules load only when a report is made
    from jax_benchmarks.report.history import GroupHistory
    from jax_benchmarks.report.rows import FigureRow, ReportTable
    from jax_benchmarks.store.views import ResultsStore

GroupName = BenchmarkGroup  # the one list of groups: src/jax_benchmarks/groups.py
Format = Literal["table", "markdown", "csv", "json", "html", "github-benchmark", "jsonl"]
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
                             "github-action-benchmark's customSmallerIsBetter JSON; jsonl: every record of every run "
                             "of the selected groups and backends, or of --run, as JSON lines: an export).",
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
                    "needs --baseline), or its memory (peak, compiled program) is larger by more than this many "
                    "percent and 1 MiB of peak (judged from single runs).",
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
    calibrate: bool = Field(
        False, description="A/A calibration of the gate on this machine: each figure's rounds in the reported run "
                           "(record 6 or more: e.g. xla numpy --rounds 10) split into two halves 200 ways, as two "
                           "runs of unchanged code: how often the gate calls a change at --fail-on-regression's "
                           "threshold (its false-alarm rate here) and the smallest slowdown it detects.",
    )
    lock_timeout: float = lock_timeout_field()
    results: Results = results_field("The results store to read")

    @field_validator("results")
    @classmethod
    def _results_readable(cls, value: ResultsLocation, info: ValidationInfo) -> ResultsLocation:
        return readable_store(with_lock_timeout(value, info))

    @field_validator("baseline")
    @classmethod
    def _baseline_file_readable(cls, value: str | None) -> str | None:
        # A URL of a store this tool does not read is refused here, its password masked (store/location.py).
        if value is not None and value != PREVIOUS and is_path_like(value) and as_location(value).kind != "postgres":
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
        if self.format == "jsonl":
            for option, given in (("--baseline", self.baseline), ("--history", self.history),
                                  ("--plot", self.plot), ("--scaling", self.scaling)):
                if given:
                    raise OptionError(option, "does not go with --format jsonl (an export of the records)")
        if self.fail_on_regression is not None and self.baseline is None and not self.calibrate:
            raise OptionError("--fail-on-regression", "needs --baseline RUN_ID|PATH|previous to compare with")
        if self.plot:
            writable_dir(PLOTS_DIR, "plots")
        return self

    @property
    def format(self) -> Format:
        return "markdown" if self.markdown else self.output_format


class RegressionFound(Failed):
    """Figures got slower than the baseline beyond the allowed percentage: exit 1 (for CI)."""


class CannotJudge(click.ClickException):
    """The gate was asked to judge figures it cannot judge (no baseline, too few rounds): exit 2, never a pass."""

    exit_code = 2


def warn(message: str) -> None:
    from jax_benchmarks.cli.console import visible

    click.echo(f"warning: {visible(message)}", err=True)


def note(message: str) -> None:
    from jax_benchmarks.cli.console import visible

    click.echo(visible(message), err=True)


def report(settings: ReportSettings, program: str = DEFAULT_PROGRAM) -> None:
    """Select the runs, compare them with the baseline, print, plot, and fail on regressions. `program`: the
    command as the user invoked it, for hints (`python main.py`, `jax-benchmarks`)."""
    from jax_benchmarks.store.location import open_store, store_errors

    # A StoreError is a DataError: one line, exit 2, as from every command.
    store = open_store(settings.results, create=False, log=note)
    try:
        with store_errors(store):
            report_from(store, settings, program)
    finally:
        store.close()


def report_from(store: ResultsStore, settings: ReportSettings, program: str = DEFAULT_PROGRAM) -> None:
    from jax_benchmarks.report import select
    from jax_benchmarks.report.envdiff import same_machine
    from jax_benchmarks.report.history import build_histories
    from jax_benchmarks.report.rows import build_table, judge_tables, order_tables

    try:
        select.require_records(store)
        filters = Filters(run=settings.run, group=settings.group, backend=settings.backend)
        if settings.format == "jsonl":
            export_jsonl(store, filters)
            return
        if settings.scaling:  # a view of its own: images/s by process count (the bad-record summary follows it)
            from jax_benchmarks.report.scaling import training_groups

            trains = list(training_groups())  # the groups that declare training epochs
            for group in trains:
                select.check_filters(store, Filters(group=group, backend=settings.backend))
            report_scaling([r for group in trains for r in store.history(group, settings.backend)], settings.format,
                           program, trains)
            return
        runs = select.chosen_runs(store, filters)
        baselines = Baselines(settings, store, filters, same_machine)
        shown = [(run, *baselines.for_run(run)) for run in runs]
        # --history draws every run of the selected groups and backends.
        # Only the HTML page's and --plot's history charts draw the samples (their quartiles).
        history_records = (store.history(settings.group, settings.backend,
                                         samples=settings.format == "html" or settings.plot)
                           if settings.history else [])
        # The records live as long as the report: frozen, the cyclic collector stops rescanning their
        # ~10⁵ objects each time the report allocates more (grouping a long history took twice as long).
        gc.freeze()
    finally:
        for summary in store.warnings():
            warn(summary)
    tables = order_tables([build_table(run, base, note) for run, base, note in shown if run],
                          list(BENCHMARK_GROUPS))
    if not tables:
        raise DataError(f"no valid benchmark records to show in {store.location}")
    if settings.calibrate:
        emit_calibration(tables, settings.fail_on_regression or 0.0, settings.format)
        return
    # All compared figures form one family (false discovery rate), judged against the gate's threshold.
    tables = judge_tables(tables, settings.fail_on_regression or 0.0)

    to_stdout = settings.format == "table"
    histories = build_histories(history_records, list(BENCHMARK_GROUPS)) if settings.history else []
    if settings.format == "html":
        from jax_benchmarks.report.page import build_page

        click.echo(printable(build_page(tables, histories, store.location), "html"), nl=False)
    elif settings.history:
        emit_history(histories, settings.format)
    else:
        if settings.format == "markdown" and (line := shown_runs_line(filters)):
            click.echo(line + "\n")
        elif settings.format == "table" and (line := shown_runs_line(filters)):
            from jax_benchmarks.cli.console import make_console, print_whole_words

            print_whole_words(make_console(), line)  # wrapped between words at the console's width, as the tables
        emit(tables, settings.format)
    if settings.plot:
        from jax_benchmarks.report.plot import plot_history, plot_spread, plot_table

        paths = [plot(table) for table in tables for plot in (plot_table, plot_spread)]
        paths += [plot_history(history) for history in histories]
        from jax_benchmarks.cli.console import visible

        for path in paths:
            if path is not None:
                click.echo(f"chart: {visible(str(path))}", err=not to_stdout)
    if settings.fail_on_regression is not None:
        for line in calibration_warnings(store, tables, settings.fail_on_regression, same_machine):
            click.echo(line, err=True)
        check_regressions([row for t in tables for row in t.rows], settings.fail_on_regression, program)


# ------------------------------------------------------- baseline environment ---

def environment_note(run: Sequence[Record], base: Sequence[Record]) -> str | None:
    """The environment differences of two compared runs, listed above the verdicts; warns on another machine
    and on other framework versions."""
    from jax_benchmarks.report.envdiff import (differences, framework_changes, machine_text, same_machine,
                                               setting_differences)

    now, before = run[-1].env, base[-1].env
    warnings = []
    if not same_machine(now, before):
        warnings.append(f"the baseline was measured on another machine ({machine_text(before)}; now "
                        f"{machine_text(now)}): its differences are not code changes")
    if settings := setting_differences(now, before):
        warnings.append(f"the baseline was measured with other settings ({'; '.join(settings)}): its differences "
                        "are not code changes")
    if versions := framework_changes(now, before):
        warnings.append(f"the baseline used other framework versions ({', '.join(versions)}): "
                        "its differences may come from them, not from code changes")
    for message in warnings:  # on stderr, and in the table's notes
        warn(message)
    lines = [f"WARNING: {message}" for message in warnings]
    changed = differences(now, before)
    if changed:
        lines.append("environment differs from the baseline: " + "; ".join(changed))
    return "\n".join(lines) if lines else None


def report_scaling(records: Sequence[Record], fmt: Format, program: str, groups: Sequence[str]) -> None:
    """`--scaling`'s view of `records`, the training epochs of `groups` (those that declare them)."""
    from jax_benchmarks.report.scaling import HEADER, cells, render_text, scaling_rows

    rows = scaling_rows(records)
    named = " or ".join(groups)
    if not rows:
        raise click.UsageError(f"no {named} training epochs in the results file: run e.g. "
                               f"`{program} {groups[0] if groups else 'GROUP'} pytorch` and `... --launch-local 2` "
                               "first")
    if fmt != "table":
        click.echo(printable(render_text(rows, fmt), fmt))
        return
    from jax_benchmarks.cli.console import make_console
    from jax_benchmarks.cli.tables import Cell, Fitting, Sheet

    # A row per setup and process count: wide where it fits the console, else each setup on a line of its own
    # with its process counts' figures under it (cli/tables.py); a run id is never cut.
    blocks: dict[str, list[tuple[str, list[Cell | None]]]] = {}
    for row in rows:
        backend, setup, workers, *figures = cells(row)
        blocks.setdefault(f"{backend} · {setup}", []).append((workers, list(figures)))
    sheet = Sheet(f"{named} training: images/s by process count (median of process 0's epochs)", "", HEADER[3:],
                  list(blocks.items()), kind_header=HEADER[2], name_header="backend · setup", left=frozenset({"run"}))
    console = make_console()
    console.print(Fitting((sheet.wide, sheet.vertical)))
    console.print("speed-up: images/s ÷ the 1-process run's; efficiency: speed-up ÷ devices (1.00 = perfect)")


def shown_runs_line(filters: Filters) -> str | None:
    """Which runs the tables show, where the user did not name one, and how to see the others."""
    if filters.run is not None:
        return None
    shown = f"the latest {filters.group} run" if filters.group else "the latest run of each group"
    return f"Shown: {shown}; --run RUN_ID or --history for the others."


class Baselines:
    """The baseline records of each reported run (another store's read once)."""

    def __init__(self, settings: ReportSettings, store: ResultsStore, filters: Filters,
                 same_machine: Callable[[Mapping[str, Scalar], Mapping[str, Scalar]], bool]) -> None:
        from jax_benchmarks.report import select

        self.value = settings.baseline
        self.store = store
        self.backend = filters.backend
        self.same_machine = same_machine
        self.gate = settings.fail_on_regression is not None
        self.pool: list[Record] = []
        if self.value is not None and self.value != PREVIOUS:
            self.pool = select.baseline_records(self.value, store, filters, warn, settings.lock_timeout)

    def for_run(self, run: Sequence[Record]) -> tuple[list[Record] | None, str | None]:
        """(baseline records or None, the note printed under the table)."""
        from jax_benchmarks.report import select

        from jax_benchmarks.report.envdiff import setting_differences

        group = run[0].group
        if self.value is None:
            return None, None
        if self.value == PREVIOUS:
            # Every record of a run was measured on one machine: one test per earlier run, latest first.
            previous = select.previous_on_machine(self.store, run, self.backend, self.same_machine,
                                                  setting_differences)
            base = previous.records
            passed = (f"run {previous.passed_over[0]} was measured with other settings "
                      f"({'; '.join(previous.passed_over[1])})" if previous.passed_over else None)
            if not base and passed:
                return None, (f"no earlier {group} run on this machine with the same settings to compare with ("
                              f"{passed}): run the same command again to make a baseline")
            if not base:
                return None, f"no earlier {group} run on this machine to compare with" + (
                    " (there are runs from other machines: pass one's run id to compare anyway)"
                    if previous.any_earlier else "")
        else:
            passed = None
            base = [r for r in self.pool if r.group == group]
            if not base:
                return None, f"the baseline has no {group} figures"
            differ = setting_differences(run[-1].env, base[-1].env)
            if differ and self.gate:  # the gate judges code changes: a run of other settings measured other work
                raise click.BadParameter(
                    f"run {base[-1].run_id} was measured with other settings than {group} run {run[-1].run_id} "
                    f"({'; '.join(differ)}): the gate judges only like with like; give a run of the same settings",
                    param_hint="'--baseline'")
        from jax_benchmarks.measure.compiled import program_note
        from jax_benchmarks.measure.oversubscription import times_threads_line

        ids = ", ".join(dict.fromkeys(r.run_id for r in base))
        notes = [note for note in (environment_note(run, base), times_threads_line(run, base),
                                   program_note(run, base)) if note]
        taken = f" (the latest earlier run with the same settings; {passed})" if passed else ""
        return base, "".join(note + "\n" for note in notes) + f"change against run {ids}{taken}"


def export_jsonl(store: ResultsStore, filters: Filters) -> None:
    """--format jsonl: the selected records as JSON lines, in the order they were written."""
    from jax_benchmarks.report import select

    if filters.run is not None:
        records: Iterable[Record] = select.apply_filters(
            store.run_records(select.resolve_run(store, filters.run, "--run")), filters)
    elif filters.group is None and filters.backend is None:
        records = store.all_records()
    else:
        select.check_filters(store, filters)
        records = store.history(filters.group, filters.backend)
    for record in records:
        click.echo(printable(record.model_dump_json(), "jsonl"))


def emit(tables: Sequence[ReportTable], fmt: Format) -> None:
    from jax_benchmarks.report import render

    if fmt == "table":
        from jax_benchmarks.cli.console import make_console

        render.render_rich(tables, make_console())
        return
    renderers = {"markdown": render.render_markdown, "csv": render.render_csv, "json": render.render_json,
                 "github-benchmark": render.render_github_benchmark}
    click.echo(printable(renderers[fmt](tables), fmt), nl=fmt in ("json", "github-benchmark"))


def printable(text: str, fmt: Format) -> str:
    """A format's whole text as it goes to stdout, to a terminal or a pipe: control characters from the records
    shown as escapes (JSON's own \\u escapes in JSON), so that none is obeyed."""
    from jax_benchmarks.cli.console import visible_json, visible_lines

    return visible_json(text) if fmt in ("json", "github-benchmark", "jsonl") else visible_lines(text)


# ---------------------------------------------------------------------- history ---

def emit_history(histories: Sequence[GroupHistory], fmt: Format) -> None:
    from jax_benchmarks.report import render

    if fmt == "table":
        from jax_benchmarks.cli.console import make_console

        render.render_history_rich(histories, make_console())
        return
    renderers = {"markdown": render.render_history_markdown, "csv": render.render_history_csv,
                 "json": render.render_history_json}
    click.echo(printable(renderers[fmt](histories), fmt), nl=fmt == "json")


# ------------------------------------------------------------------------------------------

def check_regressions(rows: Sequence[FigureRow], threshold_pct: float, program: str = DEFAULT_PROGRAM) -> None:
    """The gate: time (`check_time_regressions`) and memory (report/memory_gate.py), each by its own rule. Exit 1
    on a regression in either; never pass what it could not judge (exit 2, saying what to change): a time figure
    without a baseline or with fewer than MIN_ROUNDS rounds on a side is not a figure that passed. Memory figures
    are nearly deterministic, so memory is judged from single runs."""
    from jax_benchmarks.report.memory_gate import floor_text, judge_memory

    memory = judge_memory(rows, threshold_pct)
    grown = ", ".join(change.text() for change in memory.grown[:MAX_LISTED])
    grown += f" and {len(memory.grown) - MAX_LISTED} more" if len(memory.grown) > MAX_LISTED else ""
    memory_failure = (f"memory: {len(memory.grown)} figure(s) larger than the baseline by more than "
                      f"{threshold_pct:g} % ({floor_text()}): {grown}") if memory.grown else None
    if memory.judged and not memory.grown:
        click.echo(f"no memory regression: {memory.judged} figure(s) judged, none larger than the baseline by more "
                   f"than {threshold_pct:g} % ({floor_text()})", err=True)
    try:
        check_time_regressions(rows, threshold_pct, program)
    except RegressionFound as slower:
        raise RegressionFound(slower.message + (f"; {memory_failure}" if memory_failure else "")) from None
    except CannotJudge as cannot:
        if memory_failure:  # a regression found is reported as one, with what could not be judged beside it
            raise RegressionFound(f"regression: {memory_failure} ({cannot.message})") from None
        raise
    if memory_failure:
        raise RegressionFound(f"regression: {memory_failure}")


def check_time_regressions(rows: Sequence[FigureRow], threshold_pct: float, program: str = DEFAULT_PROGRAM) -> None:
    from jax_benchmarks.report.compare import MIN_ROUNDS, is_regression

    compared = [row for row in rows if row.comparison is not None]
    if not compared:
        # A first run (no baseline yet) is not a pass: nothing was judged, so exit 2, with the next step to take.
        raise CannotJudge(f"--fail-on-regression: no figure of this report has a baseline to compare with, so nothing "
                          f"was judged. "
                         f"The runs shown are saved and become the baseline: run the benchmark again, then this "
                         f"command, to compare; both runs need --rounds {MIN_ROUNDS} or more to be judged (e.g. "
                         f"`{program} xla all --rounds {MIN_ROUNDS}`), or give --baseline a run (id, file or "
                         f"'previous') that recorded these figures")
    busy = [row for row in compared if row.comparison is not None and row.comparison.busy is not None]
    unjudged = [row for row in compared if row.comparison is not None and row.comparison.log_ratio is None
                and row.comparison.busy is None]
    slower = [row for row in compared if is_regression(row.comparison)]
    reasons = []
    if unjudged:
        fewest = min(min(row.comparison.rounds, row.comparison.baseline_rounds)
                     for row in unjudged if row.comparison is not None)
        reasons.append(f"{len(unjudged)} of {len(compared)} figure(s) cannot be judged: {fewest} round(s) in a run, "
                       f"the variation between runs needs {MIN_ROUNDS} or more; record both runs with --rounds {MIN_ROUNDS}")
    if busy:
        first = busy[0].comparison.busy if busy[0].comparison is not None else None
        reasons.append(f"{len(busy)} of {len(compared)} figure(s) were taken on a busy machine and not judged "
                       f"({first}); measure them again while the machine is quiet")
    cannot = "; ".join(reasons)
    for line in resolution_lines(compared, threshold_pct):
        click.echo(line, err=True)
    if slower:
        listed = ", ".join(
            f"{row.group} {row.case} {row.column} {row.comparison.change_pct:+.1f} %"
            for row in slower[:MAX_LISTED] if row.comparison is not None
        )
        more = f" and {len(slower) - MAX_LISTED} more" if len(slower) > MAX_LISTED else ""
        raise RegressionFound(
            f"regression: {len(slower)} figure(s) slower than the baseline by more than {threshold_pct:g} %: "
            f"{listed}{more}" + (f" ({cannot})" if cannot else "")
        )
    if unjudged or busy:
        raise CannotJudge(f"--fail-on-regression: {cannot}")
    click.echo(f"no regression: {len(compared)} figure(s) judged, none slower than the "
               f"baseline by more than {threshold_pct:g} % beyond the variation between rounds", err=True)


def emit_calibration(tables: Sequence[ReportTable], threshold_pct: float, fmt: Format) -> None:
    """`--calibrate`: per figure, the gate's A/A false-alarm rate and detectable change on this machine's rounds."""
    from jax_benchmarks.report.compare import ALPHA, MIN_ROUNDS, POWER, calibrate, quiet_rounds, round_medians

    from jax_benchmarks.cli.console import visible
    from jax_benchmarks.report.select import figure_key

    rows: list[dict[str, Any]] = []
    for table in tables:
        rounds: dict[tuple[object, ...], list[Record]] = {}
        for record in table.records:
            rounds.setdefault(figure_key(record), []).append(record)
        by_figure = {(row.case, row.column): rounds[figure_key(row.record)] for row in table.rows if row.record.median_s}
        for (case, column), records in by_figure.items():
            found = calibrate(records, threshold_pct)
            busy_rounds = len(round_medians(records)) - len(round_medians(quiet_rounds(records)))
            rows.append({"group": table.group, "run_id": table.run_id, "case": case, "column": column,
                         "busy_rounds": busy_rounds,
                         "rounds": found.rounds if found else None, "splits": found.splits if found else None,
                         "false_alarms": found.false_alarms if found else None,
                         "false_alarm_rate": found.false_alarm_rate if found else None,
                         "detectable_pct": found.detectable_pct if found else None, "threshold_pct": threshold_pct})
    if fmt == "json":
        click.echo(json.dumps({"calibration": rows, "alpha": ALPHA, "power": POWER}, indent=2))
        return
    click.echo(f"A/A calibration of the gate at --fail-on-regression {threshold_pct:g} % (α {ALPHA:g}, power "
               f"{POWER:.0%}): each figure's rounds split into two halves, as two runs of unchanged code")
    for row in rows:
        name = f"{row['group']} {row['case']} {row['column']}"
        if row["rounds"] is None:
            busy = f" ({row['busy_rounds']} taken on a busy machine, left out)" if row["busy_rounds"] else ""
            click.echo(f"{visible(name)}: fewer than {2 * MIN_ROUNDS} quiet rounds{busy}, nothing to split "
                       f"(--rounds 6 or more)")
            continue
        click.echo(f"{visible(name)}: false alarms {row['false_alarms']} of {row['splits']} A/A splits "
                   f"({row['false_alarm_rate']:.1%}); {row['rounds'] // 2} rounds a side detect a slowdown of "
                   f"{row['detectable_pct']:.3g} % or more")


def calibration_warnings(store: ResultsStore, tables: Sequence[ReportTable], threshold_pct: float,
                         same_machine: Callable[[Mapping[str, Scalar], Mapping[str, Scalar]], bool]) -> list[str]:
    """The gate's warnings from this machine's A/A calibration in the store (report/calibration.py)."""
    from jax_benchmarks.report.calibration import latest_calibrations, limit_lines, machine_limits

    histories = {group: store.history(group, None, samples=False) for group in {t.group for t in tables}}
    limits = [limit for table in tables
              for limit in machine_limits(table.compared, latest_calibrations(histories[table.group], table.env,
                                                                              same_machine), threshold_pct)]
    return limit_lines(limits, threshold_pct)


def resolution_lines(compared: Sequence[FigureRow], threshold_pct: float) -> list[str]:
    """What the gate can resolve on this machine: the rounds a side that --fail-on-regression's percentage
    needs (from each figure's spread between rounds, both runs pooled; the median figure and the noisiest),
    and a warning where the threshold is below what these runs' rounds can detect."""
    from jax_benchmarks.report.compare import ALPHA, POWER, detectable_log, rounds_needed

    needs: list[tuple[float, str, int | None, float]] = []  # (spread, figure, rounds needed, detectable %)
    for row in compared:
        comparison = row.comparison
        if comparison is None or comparison.log_ratio is None or comparison.busy is not None:
            continue
        spread = comparison.spread
        if spread is None:
            continue
        detectable = math.expm1(detectable_log(comparison.log_ratio.se, comparison.log_ratio.df)) * 100
        needs.append((spread, f"{row.group} {row.case} {row.column}", rounds_needed(spread, threshold_pct), detectable))
    if not needs or threshold_pct <= 0:
        return []
    needs.sort()
    median, noisiest = needs[len(needs) // 2], needs[-1]

    def rounds(n: int | None) -> str:
        return f"{n} round(s) a side" if n is not None else "more than 1000 rounds a side"

    lines = [f"--fail-on-regression {threshold_pct:g} % needs {rounds(median[2])} on this machine for the median "
             f"figure (spread between rounds {median[0]:.1%}) and {rounds(noisiest[2])} for the noisiest, "
             f"{noisiest[1]} ({noisiest[0]:.1%}) (α {ALPHA:g}, power {POWER:.0%})"]
    blind = [need for need in needs if need[3] > threshold_pct]
    if blind:
        worst = max(blind, key=lambda need: need[3])
        lines.append(f"warning: --fail-on-regression {threshold_pct:g} % is below what these rounds resolve for "
                     f"{len(blind)} of {len(needs)} figure(s): e.g. {worst[1]} detects only changes of "
                     f"{worst[3]:.3g} % or more; record more --rounds or raise the threshold")
    return lines


@settings_options(ReportSettings)
def _report(**values: Any) -> None:
    from jax_benchmarks.cli.choice import program_name

    settings = parse_settings(ReportSettings, values)
    try:
        report(settings, program_name(click.get_current_context()))
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: one line, not Click's "Aborted."
        raise interrupted("Interrupted: the report was not finished.", interrupt_signal(exc)) from None


# The generated options say TEXT/FLOAT; these read better in --help.
METAVARS = {"run": "RUN_ID", "baseline": "RUN_ID|PATH|previous", "fail_on_regression": "PCT", "backend": "NAME"}
for _param in _report.__click_params__:  # type: ignore[attr-defined]
    if _param.name in METAVARS:
        _param.metavar = METAVARS[_param.name]


cli = ProgramCommand(
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
