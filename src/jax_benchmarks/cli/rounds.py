"""Rounds: a command run again and again, each time in a fresh process, under one run id. The one round loop of
the program: `--rounds N` (`run_rounds`), `verdict` and `calibrate` (`run_steps`) all start their rounds here.

Like asv, each round is a new interpreter: imports, JIT caches, allocator and
thread pools start cold, and whatever the machine was doing during that round
shows up as variation *between* rounds. Every backend of the command runs in
every round, in the same order, so the backends are interleaved across the
rounds rather than measured in one block each. A report judges a change
against the spread of the per-round medians (`src/jax_benchmarks/report/compare.py`), which
within-round samples cannot show.

The parent measures nothing itself: it starts the rounds with the settings it
was given (plus the shared run id and the round index) through the one launcher
(`cli/relaunch.py`), collects their records from their `--json` output or the
store, and `measure/rounds.py` gives the spread of each figure.

A round whose process died (`died`: killed by a signal, or an exit code the program itself never gives) is run
once more in a fresh process, with the same round index; what the dead process recorded stays in the store. A
round that dies twice is said to have failed twice (`RoundDone.failure`), and its records are never judged as a
measured round (`verdict`'s page says so in the group's findings). A round that ended with the program's own
failure (exit 1: a check failed; exit 2: bad input) is not run again: it would fail the same way.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import click

from jax_benchmarks.cli import relaunch
from jax_benchmarks.cli.relaunch import ending_with_parent, killed_by, round_argv
from jax_benchmarks.errors import Failed, interrupt_signal, interrupted
from jax_benchmarks.measure.turns import TURN_GAP, TURN_WINDOWS, Arbiter, Gap
from jax_benchmarks.settings import BenchSettings, command_line
from jax_benchmarks.store.location import ResultsLocation, as_location, for_children, saved_count
from jax_benchmarks.store.record import Record
from jax_benchmarks.store.sqlite import LOCK_TIMEOUT_S

# Filled in per round by the parent; never copied from the parent's own settings.
ROUND_FIELDS = frozenset({"rounds", "run_id", "round_index", "json_output"})

# In a step's options (a group's VERDICT_STEPS): replaced by each round's index (0, 1, ...) in the round's command,
# e.g. `--seed ROUND_INDEX` gives every round its own seed (`round_options`).
ROUND_INDEX = "{round_index}"

# The exit codes with which the program ends a round itself (errors.py's `run_cli`): 0, a judged failure (`Failed`:
# 1; an uncaught exception's traceback gives 1 too), bad input (click's UsageError: 2). Any other code means the
# process died: a signal killed it (a negative return code), another process stopped it (`RunInterrupted`'s 130 or
# 143: a stop of the whole command by the user reaches this process too, and ends the loop before any retry), or
# the interpreter itself crashed.
PROGRAM_EXIT_CODES = frozenset({0, Failed.exit_code, click.UsageError.exit_code})


class RoundFailed(Failed):
    """A round's process failed (a broken check, a crash): the records so far are saved; exit 1."""


def died(code: int) -> bool:
    """Whether a round's process died rather than ended with one of the program's own codes (`PROGRAM_EXIT_CODES`)."""
    return code not in PROGRAM_EXIT_CODES


def exit_text(code: int) -> str:
    """'exit 3', 'killed by SIGKILL'."""
    signal_name = killed_by(code)
    return f"exit {code}" if signal_name is None else f"killed by {signal_name}"


def duration_text(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


@dataclass(frozen=True)
class Step:
    """One group command run in rounds, with the options each of its rounds gets (`ROUND_INDEX` replaced) and one
    round's expected wall time (seconds) on the reference machine where it is known (0: not known).

    `in_turns`: the processes of a round taken in turns (`run_round_in_turns`, `verdict --turns`), each one of the
    group's commands with its own options before the step's ('flax', 'pytorch --compile'), from round index
    `turns_from` on (1 where `all` also checks the backends against each other once they ran, which needs them in one
    process: its first round runs as one process); empty: every round one process."""

    group: str
    command: str
    options: tuple[str, ...]
    round_s: float = 0.0
    in_turns: tuple[str, ...] = ()
    turns_from: int = 0
    # Only these cases (the command's `-k`, in place of any the options give): a verdict's added round, which runs
    # only the cases its open findings rest on (verdict/sequential.py's `next_round`); empty: the options' cases.
    cases: tuple[str, ...] = ()

    def taken_in_turns(self, index: int) -> bool:
        return bool(self.in_turns) and index >= self.turns_from

    @property
    def label(self) -> str:
        return " ".join((self.group, self.command, *self.own_options))

    @property
    def own_options(self) -> tuple[str, ...]:
        """The options every round of the step gets, `cases` as its `-k` (the option's last value is the one a
        command takes: the options' own `-k` is dropped so that the line says once which cases run)."""
        if not self.cases:
            return self.options
        from jax_benchmarks.settings import BenchSettings, option_spellings

        spellings = option_spellings(BenchSettings, "case")  # the group commands' case filter: '--case', '-k'
        kept = [option for i, option in enumerate(self.options)
                if option not in spellings and (i == 0 or self.options[i - 1] not in spellings)]
        return (*kept, "-k", ",".join(self.cases))


def round_options(step: Step, index: int) -> list[str]:
    """The step's options for round `index` (`Step.own_options`): `ROUND_INDEX` in an option replaced by the
    index."""
    return [option.replace(ROUND_INDEX, str(index)) for option in step.own_options]


def step_options(step: Step, index: int, results: ResultsLocation | Path, threads: int | None) -> list[str]:
    """A step's options in its round `index`: its own (`round_options`: e.g. the round's seed), the store
    (`results` as given: a database URL with its password is the text to connect to, never shown), its
    `--lock-timeout` where not the default, and `--threads`."""
    where = as_location(results)
    return [*round_options(step, index), "--results", where.value,
            *(["--lock-timeout", str(where.lock_timeout_s)] if where.lock_timeout_s != LOCK_TIMEOUT_S else []),
            *(["--threads", str(threads)] if threads is not None else [])]


@dataclass(frozen=True)
class RoundDone:
    """A round that ran: `code`, its last process's exit code; `failure`: where its process died twice, what
    ended each ('round 2 of xla failed twice: killed by SIGKILL, then exit 3'), else ''."""

    label: str
    seconds: float
    code: int
    group: str = ""
    index: int = 0
    failure: str = ""
    stdout: str = ""
    command: str = ""  # the step's command ('all', 'flax'): with `group`, which step's round it was (`run_steps`)
    cases: tuple[str, ...] = ()  # the step's `cases` (its `-k`): only those ran (`run_steps`)

    @property
    def ended(self) -> str:
        """How it ended, for a line that lists failed rounds: 'exit 1', or its `failure`."""
        return self.failure or f"exit {self.code}"


def run_round(group: str, command: str, options: Sequence[str], *, rounds: int, index: int, run_id: str,
              log: Path | None = None, label: str = "") -> RoundDone:
    """Round `index` of `rounds` of `group command options` in a fresh process, and once more in another where the
    first died (`died`). Its output goes to `log` (appended), or, without one, its stdout is kept (`RoundDone.stdout`)
    and its stderr passes through. The retry is said where the output goes."""
    argv = round_argv(group, command, options, rounds=rounds, index=index, run_id=run_id)
    began = time.perf_counter()
    codes: list[int] = []
    stdout = ""
    while True:
        # relaunch.run_fresh, looked up when called: a test stands in for the launcher there.
        if log is None:
            done = relaunch.run_fresh(argv, capture=True)
        else:
            with log.open("a", encoding="utf-8") as out:
                done = relaunch.run_fresh(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        codes.append(done.returncode)
        stdout = done.stdout or ""
        if not died(done.returncode) or len(codes) == 2:
            break
        said = (f"round {index + 1}/{rounds} of {group} {command} died ({exit_text(done.returncode)}): run once more "
                "in a fresh process; what it recorded stays in the store")
        if log is None:
            click.echo(said, err=True)
        else:
            with log.open("a", encoding="utf-8") as out:
                out.write(f"== {said}\n")
    failure = (f"round {index + 1} of {group} failed twice: {', then '.join(map(exit_text, codes))}"
               if len(codes) == 2 and died(codes[-1]) else "")
    return RoundDone(label or f"{group} {command} · round {index + 1}/{rounds}", time.perf_counter() - began,
                     codes[-1], group, index, failure, stdout)


def has_ended(child: relaunch.Child) -> bool:
    """Whether `child` has ended, leaving it unreaped (a zombie) where the system allows it (`os.waitid`'s `WNOWAIT`:
    Linux; elsewhere it is reaped, and what it used after the others' last reading is not counted as theirs)."""
    if not hasattr(os, "waitid"):
        return child.poll() is not None
    return os.waitid(os.P_PID, child.process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def wait_in_turns(children: Mapping[str, relaunch.Child], arbiter: Arbiter) -> dict[str, int]:
    """Wait for a round's processes taken in turns; their exit codes by name. Each that ends is told to the arbiter
    at once, but left a zombie (`WNOWAIT`) until all have ended: a zombie's /proc/<pid>/stat keeps the CPU time it
    used, which the others count as their own while they measure (measure/turns.py's `TurnSampler`), so a process
    that ends in the middle of another's case is not taken for a process outside the round."""
    ended: set[str] = set()
    while len(ended) < len(children):
        for name, child in children.items():
            if name not in ended and has_ended(child):
                ended.add(name)
                arbiter.ended(child.process.pid)
        time.sleep(0.05)
    return {name: child.process.wait() for name, child in children.items()}


def run_round_in_turns(group: str, processes: Sequence[str], options: Sequence[str], *, rounds: int, index: int,
                       run_id: str, log: Path, label: str = "", gap: Gap = TURN_GAP,
                       windows: int = TURN_WINDOWS) -> RoundDone:
    """Round `index` of `rounds` taken in turns (jax_benchmarks.measure.turns): each of `processes` (a command of the
    group with its own options first: 'pytorch --compile') in its own fresh process (`group COMMAND OWN options`), the
    processes side by side, their timed windows granted one at a time by an arbiter of this process. A process that
    died (`died`) is run once more, alone. Each process's output is appended to `log` once the round ended, one
    process after another (not interleaved). `gap` and `windows`: the arbiter's (jax_benchmarks.measure.turns;
    benchmarks/turns_rounds.py tries others)."""
    began = time.perf_counter()
    codes: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="turns-") as folder:
        pending = list(processes)
        for attempt in (1, 2):
            outputs = {name: Path(folder, f"{'_'.join(name.split())}.{attempt}.log") for name in pending}
            with Arbiter(str(Path(folder, f"turns.{attempt}")), len(pending), gap, windows) as arbiter:
                children = {}
                try:
                    for name in pending:
                        command, *own = name.split()
                        argv = round_argv(group, command, [*own, *options, "--turns", arbiter.path], rounds=rounds,
                                          index=index, run_id=run_id)
                        with outputs[name].open("w", encoding="utf-8") as out:
                            children[name] = relaunch.start(ending_with_parent(argv), stdin=subprocess.DEVNULL,
                                                             stdout=out, stderr=subprocess.STDOUT)
                    codes.update(wait_in_turns(children, arbiter))
                except KeyboardInterrupt as exc:  # the round is stopped: every process gets the signal that stopped it
                    relaunch.stop(list(children.values()), interrupt_signal(exc))
                    raise
            with log.open("a", encoding="utf-8") as out:
                for name in pending:
                    out.write(f"== {group} {name}, round {index + 1}/{rounds} in turns "
                              f"(attempt {attempt}): exit {codes[name]}\n")
                    out.write(outputs[name].read_text(encoding="utf-8", errors="replace"))
            dead = [name for name in pending if died(codes[name])]
            if not dead or attempt == 2:
                break
            with log.open("a", encoding="utf-8") as out:
                out.write(f"== round {index + 1}/{rounds} of {group}: {', '.join(dead)} died: run once more, alone "
                          "in turns; what it recorded stays in the store\n")
            pending = dead
    dead_twice = [name for name in pending if died(codes[name])]  # `pending`: the last attempt's processes
    failure = (f"round {index + 1} of {group} failed twice: {', '.join(dead_twice)}" if dead_twice else "")
    worst = next((codes[name] for name in processes if codes[name] != 0), 0)
    return RoundDone(label or f"{group} · round {index + 1}/{rounds} in turns", time.perf_counter() - began, worst,
                     group, index, failure)


# ------------------------------------------------------------------ --rounds N ---

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
        try:
            done = run_round(group, command, [*command_line(passed_on, skip=ROUND_FIELDS), "--json"],
                             rounds=settings.rounds, index=index, run_id=run_id)
        except KeyboardInterrupt as exc:  # the round was stopped; the rounds before and its records are saved
            raise interrupted(f"Interrupted: {saved_count(settings.results, run_id)} records of run {run_id} are "
                              f"saved in {settings.results}", interrupt_signal(exc)) from None
        walls.append(done.seconds)
        records += parse_records(done.stdout)
        click.echo(f"round {index + 1}/{settings.rounds} ended in {walls[-1]:.1f} s; {len(records)} records so far",
                   err=True)
        if done.failure:
            raise RoundFailed(f"{done.failure}; {len(records)} record(s) of run {run_id} are saved")
        if done.code != 0:
            raise RoundFailed(
                f"round {index + 1}/{settings.rounds} exited with code {done.code}; "
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


# ------------------------------------------------------- steps: verdict, calibrate ---

def run_steps(steps: Sequence[Step], rounds: int, results: ResultsLocation | Path, run_id: str, log: Path,
              show: Callable[[str, Sequence[RoundDone]], None], threads: int | None = None,
              first_round: int = 0) -> list[RoundDone]:
    """Every round (from index `first_round` to `rounds`) of every step, one fresh process each (`run_round`), their
    output appended to `log` under a line naming the run and the round; `show(label, rounds done)` is called
    before each round. A failed round is noted and the rest still run. The rounds get the store without its password
    on their command lines (`for_children`)."""
    with for_children(as_location(results)) as given:
        done: list[RoundDone] = []
        for step in steps:
            for index in range(first_round, rounds):
                label = (f"{step.group} {step.command} · round {index + 1}/{rounds}"
                         + (" in turns" if step.taken_in_turns(index) else ""))
                show(label, done)
                with log.open("a", encoding="utf-8") as out:
                    out.write(f"\n== verdict {run_id}: {step.label} (round {index + 1}/{rounds})\n")
                options = step_options(step, index, given, threads)
                if step.taken_in_turns(index):
                    ran = run_round_in_turns(step.group, step.in_turns, options, rounds=rounds, index=index,
                                             run_id=run_id, log=log, label=label)
                else:
                    ran = run_round(step.group, step.command, options, rounds=rounds, index=index, run_id=run_id,
                                    log=log, label=label)
                done.append(replace(ran, command=step.command, cases=step.cases))
                with log.open("a", encoding="utf-8") as out:  # the wall times the scale's round estimates come from
                    out.write(f"== verdict {run_id}: {step.label} (round {index + 1}/{rounds}) took "
                              f"{done[-1].seconds:.1f} s, exit {done[-1].code}\n")
        return done
