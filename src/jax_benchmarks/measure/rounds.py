"""`--rounds N`: the same command in N fresh processes, one after another, recorded under one run id.

Like asv, each round is a new interpreter: imports, JIT caches, allocator and
thread pools start cold, and whatever the machine was doing during that round
shows up as variation *between* rounds. Every backend of the command runs in
every round, in the same order, so the backends are interleaved across the
rounds rather than measured in one block each. A report judges a change
against the spread of the per-round medians (`src/jax_benchmarks/report/compare.py`), which
within-round samples cannot show.

The parent measures nothing itself: it starts the rounds with the settings it
was given (plus the shared run id and the round index), collects their
records from their `--json` output and prints the spread of each figure.
"""

from __future__ import annotations

import contextlib
import json
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click
from pydantic import BaseModel

from jax_benchmarks.errors import Failed, interrupt_signal, interrupted
from jax_benchmarks.cli.relaunch import self_command
from jax_benchmarks.store.location import ResultsLocation, saved_count
from jax_benchmarks.store.record import Record
from jax_benchmarks.settings import BenchSettings, command_line

# Filled in per round by the parent; never copied from the parent's own settings.
ROUND_FIELDS = frozenset({"rounds", "run_id", "round_index", "json_output"})
ROUND_STOP_S = 10.0  # how long an interrupted round may take to end (a record being written is finished)
OWN_SIGINT_S = 1.0  # how long a round may take to end on the Ctrl-C it got itself, before it is handed one


class RoundFailed(Failed):
    """A round's process failed (a broken check, a crash): the records so far are saved; exit 1."""


def round_argv(group: str, command: str, settings: BenchSettings, run_id: str, index: int) -> list[str]:
    return [
        *self_command(), group, command, *command_line(settings, skip=ROUND_FIELDS),
        "--rounds", str(settings.rounds), "--run-id", run_id, "--round-index", str(index), "--json",
    ]


@dataclass(frozen=True)
class RoundsOutcome:
    records: list[Record]
    wall_s: float
    round_wall_s: list[float]


def run_rounds(group: str, command: str, settings: BenchSettings, run_id: str) -> RoundsOutcome:
    """Start the rounds one by one; their human output passes through on stderr."""
    records: list[Record] = []
    walls: list[float] = []
    start = time.perf_counter()
    for index in range(settings.rounds):
        click.echo(f"round {index + 1}/{settings.rounds}: {group} {command} in a fresh process", err=True)
        round_start = time.perf_counter()
        done = run_round(round_argv(group, command, settings, run_id, index), settings.results, run_id)
        walls.append(time.perf_counter() - round_start)
        records += parse_records(done.stdout)
        click.echo(f"round {index + 1}/{settings.rounds} ended in {walls[-1]:.1f} s; {len(records)} records so far",
                   err=True)
        if done.returncode != 0:
            raise RoundFailed(
                f"round {index + 1}/{settings.rounds} exited with code {done.returncode}; "
                f"{len(records)} record(s) of run {run_id} are saved"
            )
    return RoundsOutcome(records, time.perf_counter() - start, walls)


def run_round(argv: list[str], results: ResultsLocation, run_id: str) -> subprocess.CompletedProcess[str]:
    """One round's process. On Ctrl-C or SIGTERM the round is handed the signal (Ctrl-C at a terminal has
    reached it already) and given ROUND_STOP_S to finish the record it writes and exit; then the line
    says how many records of the run are in the store, counted there (the rounds before, and this one's)."""
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        stdout, _ = child.communicate()
    except KeyboardInterrupt as exc:
        signum = interrupt_signal(exc)
        if signum == signal.SIGINT:  # Ctrl-C at a terminal reached the round as well: let it end on that one
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=OWN_SIGINT_S)
        if child.poll() is None:  # a signal sent to this process alone (`kill`): handed on
            child.send_signal(signum)
        try:
            child.wait(timeout=ROUND_STOP_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        raise interrupted(f"Interrupted: {saved_count(results, run_id)} records of run {run_id} are saved "
                          f"in {results}", signum) from None
    return subprocess.CompletedProcess(argv, child.returncode, stdout)


def parse_records(stdout: str) -> list[Record]:
    """The records a round printed with --json (nothing when it failed before printing)."""
    text = stdout.strip()
    if not text:
        return []
    try:
        data = json.loads(text.splitlines()[-1])
    except json.JSONDecodeError:
        return []
    return [Record.model_validate(item) for item in data] if isinstance(data, list) else []


@dataclass(frozen=True)
class FigureSpread:
    case: str
    column: str
    round_medians: list[float]

    @property
    def median_s(self) -> float:
        return statistics.median(self.round_medians)

    @property
    def spread_pct(self) -> float:
        """(slowest round − fastest round) / median of the round medians, in percent."""
        return (max(self.round_medians) - min(self.round_medians)) / self.median_s * 100


def spreads(records: Sequence[Record]) -> list[FigureSpread]:
    """Per figure: the median of each round (a later record of the same round wins)."""
    by_figure: dict[tuple[str, str], dict[int, float]] = {}
    for record in records:
        if record.median_s is None or record.round_index is None:
            continue
        column = record.backend + (f" {record.variant}" if record.variant else "")
        if record.device != "cpu":
            column += f" @{record.device}"
        by_figure.setdefault((record.case, column), {})[record.round_index] = record.median_s
    return [FigureSpread(case, column, [rounds[i] for i in sorted(rounds)])
            for (case, column), rounds in by_figure.items()]
