"""`--rounds N`: the same command in N fresh processes, one after another, recorded under one run id.

Like asv, each round is a new interpreter: imports, JIT caches, allocator and
thread pools start cold, and whatever the machine was doing during that round
shows up as variation *between* rounds. Every backend of the command runs in
every round, in the same order, so the backends are interleaved across the
rounds rather than measured in one block each. A report judges a change
against the spread of the per-round medians (`src/jax_benchmarks/report/compare.py`), which
within-round samples cannot show.

The parent measures nothing itself: it starts the rounds with the settings it
was given (plus the shared run id and the round index) through the one launcher
(`cli/relaunch.py`), collects their records from their `--json` output, and
`measure/rounds.py` gives the spread of each figure.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import click

from jax_benchmarks.cli.relaunch import round_argv, run_fresh
from jax_benchmarks.errors import Failed, interrupt_signal, interrupted
from jax_benchmarks.store.location import for_children, saved_count
from jax_benchmarks.store.record import Record
from jax_benchmarks.settings import BenchSettings, command_line

# Filled in per round by the parent; never copied from the parent's own settings.
ROUND_FIELDS = frozenset({"rounds", "run_id", "round_index", "json_output"})


class RoundFailed(Failed):
    """A round's process failed (a broken check, a crash): the records so far are saved; exit 1."""


@dataclass(frozen=True)
class RoundsOutcome:
    records: list[Record]
    wall_s: float
    round_wall_s: list[float]


def run_rounds(group: str, command: str, settings: BenchSettings, run_id: str) -> RoundsOutcome:
    """Start the rounds one by one; their human output passes through on stderr. The rounds get the store without
    its password on their command lines (`for_children`)."""
    with for_children(settings.results) as given:
        return rounds_of(group, command, settings, settings.model_copy(update={"results": given}), run_id)


def rounds_of(group: str, command: str, settings: BenchSettings, passed_on: BenchSettings,
              run_id: str) -> RoundsOutcome:
    """`run_rounds`' rounds: each started with `passed_on`'s options, `settings` named where one is shown."""
    records: list[Record] = []
    walls: list[float] = []
    start = time.perf_counter()
    for index in range(settings.rounds):
        click.echo(f"round {index + 1}/{settings.rounds}: {group} {command} in a fresh process", err=True)
        round_start = time.perf_counter()
        argv = round_argv(group, command, [*command_line(passed_on, skip=ROUND_FIELDS), "--json"],
                          rounds=settings.rounds, index=index, run_id=run_id)
        try:
            done = run_fresh(argv, capture=True)
        except KeyboardInterrupt as exc:  # the round was stopped; the rounds before and its records are saved
            raise interrupted(f"Interrupted: {saved_count(settings.results, run_id)} records of run {run_id} are "
                              f"saved in {settings.results}", interrupt_signal(exc)) from None
        walls.append(time.perf_counter() - round_start)
        records += parse_records(done.stdout or "")
        click.echo(f"round {index + 1}/{settings.rounds} ended in {walls[-1]:.1f} s; {len(records)} records so far",
                   err=True)
        if done.returncode != 0:
            raise RoundFailed(
                f"round {index + 1}/{settings.rounds} exited with code {done.returncode}; "
                f"{len(records)} record(s) of run {run_id} are saved"
            )
    return RoundsOutcome(records, time.perf_counter() - start, walls)


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
