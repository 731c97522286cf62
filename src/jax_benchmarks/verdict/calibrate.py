"""`python main.py calibrate GROUP[:COMMAND]...`: A/A rounds of unchanged code on this machine, then what
the regression gate does with them.

Each round of each chosen group command is a fresh process, started by the one round loop that `--rounds` and
`verdict` use (cli/rounds.py's `run_steps`: `--rounds N --round-index i --run-id ID`; a round whose process died is
run once more), all under one run id that marks them as a calibration (report/calibration.py). Then, per figure, the rounds are split into two halves many ways
and judged as the gate judges two runs (`report --calibrate --run ID`): how often it calls a change in
code that did not change (its false-alarm rate here) and the smallest slowdown it detects. The rounds stay
in the results store; `report --fail-on-regression PCT` later reads them back and warns where PCT is below
what this machine resolves with the rounds it compares.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import click

from jax_benchmarks.cli.choice import ProgramCommand
from jax_benchmarks.errors import Failed, interrupt_signal, interrupted
from jax_benchmarks.groups import BENCHMARK_GROUPS, GROUPS
from jax_benchmarks.report.compare import MIN_ROUNDS
from jax_benchmarks.settings import FiniteFloatRange, lock_timeout_option
from jax_benchmarks.store.sqlite import LOCK_TIMEOUT_S
from jax_benchmarks.store.location import (DefaultStoreOption, LocationParam, ResultsLocation, as_location, default_text,
                                           saved_count, side_folder)
from jax_benchmarks.cli.rounds import Step

if TYPE_CHECKING:
    from jax_benchmarks.verdict.findings import Contrast

DEFAULT_ROUNDS = 10  # the goal: a 1.5× slowdown caught in 19 of 20 trials at 10 rounds
ALL = "all"


class CalibrationFailed(Failed):
    """A round failed, or the verdict's rule called a framework faster than itself: the calibration of the figures
    that were measured is still printed; exit 1."""


def parse_step(text: str) -> tuple[str, str]:
    """'xla' -> ('xla', 'all'); 'xla:numpy' -> ('xla', 'numpy'); click.BadParameter for an unknown group."""
    group, _, command = text.partition(":")
    if group not in BENCHMARK_GROUPS:
        raise click.BadParameter(f"{text!r}: the group must be one of {', '.join(BENCHMARK_GROUPS)}, optionally "
                                 "followed by :COMMAND (e.g. xla:numpy)", param_hint="'GROUP[:COMMAND]'")
    return group, command or ALL


def check_command(group: str, command: str) -> None:
    """The command must exist in the group (loads the group's command list, not its frameworks)."""
    import importlib

    commands = importlib.import_module(GROUPS[group].module).cli.commands
    if command not in commands:
        raise click.BadParameter(f"{group}:{command}: {group} has the commands {', '.join(sorted(commands))}",
                                 param_hint="'GROUP[:COMMAND]'")


# Options of a round that calibrate sets itself (`measure`'s round argv), and options with which a round
# measures nothing: refused in --options, with the reason.
OWN_OPTIONS = ("--rounds", "--round-index", "--run-id", "--results", "--threads")
MEASURE_NOTHING = ("--list", "--help", "-h")


def check_rounds(steps: Sequence[Step], rounds: int, results: ResultsLocation, threads: int | None,
                 run_id: str) -> None:
    """Every step's round command line, parsed in this process by the command itself (click's types, its settings'
    checks) before any round starts: a bad --options value or a command calibrate cannot run is refused here, the
    reason on the terminal (else each round would exit 2 with it in the log)."""
    from jax_benchmarks.cli.commands import check_command_line
    from jax_benchmarks.cli.relaunch import round_argv, self_command
    from jax_benchmarks.cli.rounds import step_options

    for step in steps:
        for token in step.options:
            option = token.split("=", 1)[0]
            if option in OWN_OPTIONS:
                raise click.BadParameter(f"{option} is set by calibrate itself (give it to calibrate, or leave it "
                                         "out)", param_hint="'--options'")
            if option in MEASURE_NOTHING:
                raise click.BadParameter(f"{option}: the rounds would measure nothing", param_hint="'--options'")
        argv = round_argv(step.group, step.command, step_options(step, 0, results, threads), rounds=rounds,
                          index=0, run_id=run_id)[len(self_command()):]
        import importlib

        group = importlib.import_module(GROUPS[step.group].module).cli
        try:
            check_command_line(group.commands[step.command], argv[2:],
                               click.Context(group, info_name=step.group))
        except click.ClickException as exc:
            raise click.BadParameter(f"{step.group}:{step.command} cannot run with it: "
                                     f"{' '.join(exc.format_message().split())}", param_hint="'--options'") from None


@click.command("calibrate", cls=ProgramCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("steps", nargs=-1, required=True, metavar="GROUP[:COMMAND]...")
@click.option("--rounds", type=click.IntRange(2 * MIN_ROUNDS, 100), default=DEFAULT_ROUNDS, show_default=True,
              help=f"Rounds of each group command, each a fresh process (the A/A splits need {2 * MIN_ROUNDS} or more).")
@click.option("--fail-on-regression", "threshold_pct", type=FiniteFloatRange(0, 10_000), default=0.0,
              show_default=True, metavar="PCT",
              help="The gate's threshold to calibrate: how often it calls a change of more than PCT % in unchanged code.")
@click.option("--margin", "margin_pct", type=FiniteFloatRange(0, 100, min_open=True), default=None,
              metavar="PERCENT",
              help="The verdict's margin for its A/A check (each figure's even rounds against its odd rounds, judged "
                   "as the verdict judges two frameworks; default: the verdict's, 10).")
@click.option("--options", "group_options", default="", metavar="TEXT",
              help="Options given to every group command, e.g. '--matrix-size 256' (shell quoting).")
@click.option("--threads", type=click.IntRange(1, 1024), default=None,
              help="Threads for NumPy's BLAS/LAPACK, PyTorch and XLA alike (default: each library's own).")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="table: one line per figure; json: the same as data.")
@click.option("--results", type=LocationParam(), default=default_text, cls=DefaultStoreOption,
              show_default=True, help="The store the rounds are appended to.")
@lock_timeout_option()
def cli(steps: tuple[str, ...], rounds: int, threshold_pct: float, group_options: str, threads: int | None,
        output_format: Literal["table", "json"], results: ResultsLocation, margin_pct: float | None,
        lock_timeout_s: float = LOCK_TIMEOUT_S) -> None:
    """A/A calibration of the regression gate on this machine: run each GROUP[:COMMAND] (COMMAND
    defaults to all) --rounds times in fresh processes, unchanged, then print per figure the gate's
    false-alarm rate at --fail-on-regression and the smallest slowdown it detects. The rounds stay in
    the results store; `report --fail-on-regression PCT` warns where PCT is below what they resolve.

    Example: python main.py calibrate xla:numpy --options '--matrix-size 256' --rounds 10
    """
    from jax_benchmarks.report.calibration import calibration_run_id
    from jax_benchmarks.settings import writable_file
    from jax_benchmarks.cli.rounds import duration_text, run_steps

    results = replace(results, lock_timeout_s=lock_timeout_s)  # the check, every round's writes, the report's read
    chosen = [parse_step(text) for text in steps]
    for group, command in chosen:
        check_command(group, command)
    try:
        extra = tuple(shlex.split(group_options))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--options'") from None
    if threads is not None:
        from jax_benchmarks.hardware.devices import cpu_count

        if threads > cpu_count():
            raise click.BadParameter(f"{threads} threads requested but this process may use {cpu_count()} core(s); "
                                     f"allowed: 1–{cpu_count()}", param_hint="'--threads'")
    try:
        writable_file(as_location(results))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--results'") from None
    run_id = calibration_run_id()
    plan = [Step(group, command, extra) for group, command in chosen]
    check_rounds(plan, rounds, results, threads, run_id)
    log = side_folder(results) / f"calibrate-{run_id}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    click.echo(f"calibration run {run_id}: {len(chosen)} group command(s) × {rounds} rounds, unchanged; "
               f"output of the groups in {log}", err=True)
    try:
        done = run_steps(plan, rounds, results, run_id, log, lambda label, finished: click.echo(
            f"[{len(finished) + 1}/{rounds * len(chosen)}] {label}", err=True), threads)
    except KeyboardInterrupt as exc:
        raise interrupted(f"Interrupted: {saved_count(results, run_id)} records of calibration run {run_id} are "
                          f"saved in {results}", interrupt_signal(exc)) from None
    click.echo(f"calibration run {run_id}: {len(done)} rounds in {duration_text(sum(d.seconds for d in done))}; "
               f"records in {results}", err=True)
    failed = [d for d in done if d.code != 0]
    judged: list[Contrast] = []
    if len(failed) < len(done):
        from jax_benchmarks.report.cli import ReportSettings, report

        report(ReportSettings.model_validate({"run": run_id, "calibrate": True, "fail_on_regression": threshold_pct,
                                              "results": results, "lock_timeout": lock_timeout_s,
                                              "output_format": output_format}))
        judged = verdict_aa(results, run_id, margin_pct)
    if failed:
        raise CalibrationFailed(f"{len(failed)} round(s) failed: "
                                f"{', '.join(f'{d.label} ({d.ended})' for d in failed[:5])}; see {log}")
    from jax_benchmarks.verdict.aa import called_faster

    false = [f"{c.a} against {c.b} called {c.judged}" for c in called_faster(judged)]
    if false:
        raise CalibrationFailed(f"the verdict's rule called {len(false)} figure(s) faster or slower than themselves "
                                f"(A/A): {', '.join(false[:5])}")
    if not judged:
        # Every figure lost its rounds to a busy machine (or measured none): the A/A check judged nothing, and a
        # check that could not judge must not pass.
        from jax_benchmarks.report.cli import CannotJudge

        raise CannotJudge(f"calibration run {run_id} judged nothing: no figure has {2 * MIN_ROUNDS} rounds taken on "
                          "a quiet machine; run it again when other programs are not holding the cores")


def verdict_aa(results: ResultsLocation, run_id: str, margin_pct: float | None) -> list[Contrast]:
    """The verdict's A/A check of the calibration's rounds (verdict/aa.py), its lines on stderr; the comparisons it
    judged (the caller exits 1 on a false decision, 2 when there are none)."""
    from jax_benchmarks.verdict.aa import aa_contrasts, aa_lines
    from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT
    from jax_benchmarks.verdict.source import read_results

    margin = DEFAULT_MARGIN_PCT if margin_pct is None else margin_pct
    found = aa_contrasts([r for r in read_results(results, lambda _: None, run_id)[0] if r.run_id == run_id], margin)
    for line in aa_lines(found, margin):
        click.echo(line, err=True)
    return found
