"""Builds the click group of an experiment: one subcommand per backend, plus `all`.

Every group works the same way: settings are validated, each selected
backend module is imported (only now: torch, jax and flax load lazily) and
its `run(settings, run)` measures through the core and records; then the
CLI prints the table and, with `--json`, the JSON array of the records.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import click

from src.core.settings import BenchSettings, parse_settings, settings_options


class BackendModule(Protocol):
    """What a `<framework>_backend.py` module provides."""

    def run(self, settings: Any, run: Any) -> None: ...


@dataclass(frozen=True)
class BackendSpec:
    module: str
    help: str
    settings: type[BenchSettings]
    in_all: bool = True


@dataclass(frozen=True)
class GroupSpec:
    name: str
    help: str
    backends: dict[str, BackendSpec]
    all_settings: type[BenchSettings] | None = None  # None: no `all` subcommand
    metric_rows: Sequence[str] = ()
    # Called after the table, e.g. to print a cross-backend parity summary.
    after: Callable[[Any, Any], None] | None = field(default=None)


class BackendGroup(click.Group):
    """Lists its backends first; an unknown backend names the allowed ones."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = click.utils.make_str(args[0])
        if not name.startswith("-") and name not in self.commands:
            raise click.UsageError(
                f"Invalid value for 'BACKEND': {name!r} is not one of {', '.join(self.commands)}.", ctx
            )
        return super().resolve_command(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # keep declaration order: backends, all, extras


def load_backend(spec: BackendSpec) -> BackendModule:
    module: BackendModule = importlib.import_module(spec.module)
    return module


def execute(
    group: GroupSpec, names: Sequence[str], settings: BenchSettings, *, run_id: str | None = None, show: bool = True
) -> None:
    """Run the selected backends into one run; print the table and the JSON.

    `run_id` joins a run another process started (a multi-process job records under one id);
    `show=False` records without printing anything (the job's other processes)."""
    from src.core.console import make_console, print_run_header
    from src.core.results import Run
    from src.core.tables import comparison_table

    console = make_console(settings.json_output)
    console.quiet = not show
    run = Run(group.name, settings.results, log=console.print, run_id=run_id)
    print_run_header(console, run, settings)
    try:
        for name in names:
            console.rule(f"{group.name} {name}")
            load_backend(group.backends[name]).run(settings, run)
        if group.after is not None and run.records:
            group.after(run, console)  # may add records (e.g. a parity check) or raise CheckFailed
    finally:
        # Whatever happened, show and hand out what was measured: it is already on disk.
        if run.records and show:
            console.print(comparison_table(run.records, f"{group.name}: {', '.join(names)}", group.metric_rows))
            console.print(f"{len(run.records)} records appended to {settings.results} (run {run.run_id})")
        if settings.json_output and show:
            click.echo(json.dumps([r.model_dump() for r in run.records]))


def _command(group: GroupSpec, name: str, names: list[str], model: type[BenchSettings], help_: str) -> click.Command:
    @settings_options(model)
    def callback(**values: Any) -> None:
        execute(group, names, parse_settings(model, values))

    return click.Command(name, callback=callback, params=callback.__click_params__, help=help_)  # type: ignore[attr-defined]


def build_group(group: GroupSpec) -> BackendGroup:
    cli = BackendGroup(group.name, help=group.help, context_settings={"help_option_names": ["-h", "--help"]})
    for name, spec in group.backends.items():
        cli.add_command(_command(group, name, [name], spec.settings, spec.help))
    if group.all_settings is not None:
        in_all = [n for n, s in group.backends.items() if s.in_all]
        cli.add_command(_command(group, "all", in_all, group.all_settings, f"Run {', '.join(in_all)} side by side."))
    return cli
