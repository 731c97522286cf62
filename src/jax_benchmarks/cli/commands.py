"""Builds the click group of an experiment: one subcommand per backend, plus `all`.

Every group works the same way: settings are validated, each selected
backend module is imported (only now: torch, jax and flax load lazily) and
declares its suites (`suites(settings)`); the core harness (`src/jax_benchmarks/measure/harness.py`)
prepares, times, checks and records each case; then the CLI prints the table and,
with `--json`, the JSON array of the records.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import click

from jax_benchmarks.cli.choice import ProgramCommand, NamedSubcommands
from jax_benchmarks.frameworks.available import (
    Framework, FrameworkMissing, install_command, missing_libraries, unavailable_reason,
)
from jax_benchmarks.hardware.devices import devices_to_time
from jax_benchmarks.errors import OutOfMemory, handling, interrupt_signal, interrupted
from jax_benchmarks.hardware.gpu_policy import GpuPolicy, applied
from jax_benchmarks.hardware.xla_flags import CpuConv, set_before_jax
from jax_benchmarks.measure.harness import BackendModule, run_suite
from jax_benchmarks.measure.memory import DeviceMemory
from jax_benchmarks.measure.profile import ProfilePass, set_environment as set_profiler_environment
from jax_benchmarks.measure.turns import TurnClient, Turns
from jax_benchmarks.settings import BenchSettings, parse_settings, settings_options


@dataclass(frozen=True)
class CommandSpec:
    """A command of a group that runs declared suites: a backend (`BackendSpec`), or one of the group's other
    commands (`GroupSpec.commands`, e.g. `mnist preprocess-images`, whose records name their own column).
    Everything the rest of the program knows about it is declared here."""

    module: str  # its `suites(settings)`; imported only when it runs (a backend imports its framework at the top)
    help: str
    settings: type[BenchSettings]
    # The optional libraries it imports: missing ones list it as unavailable, with what to install; the GPU
    # policy (matmul precision) is applied to those of them it knows (JAX, PyTorch).
    needs: tuple[Framework, ...] = ()
    # How a case's device peak is read on a GPU (measure/memory.py); None: the record says none is read.
    device_memory: DeviceMemory | None = None

    @property
    def missing(self) -> tuple[Framework, ...]:
        """What it needs that is not installed (empty: it can run)."""
        return missing_libraries(*self.needs)


@dataclass(frozen=True)
class BackendSpec(CommandSpec):
    """One backend of a group: a framework's implementation of the group's cases; `all` runs those `in_all`."""

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
    # Whether `after` checks the backends against each other (the gradients' and the fits' agreement: it needs every
    # backend's results in one process). False where it only prints what the records hold (mnist's table of modes).
    after_compares: bool = True
    # The group's other commands that run suites, listed after `all` (not backends: `all` never runs them).
    commands: dict[str, CommandSpec] = field(default_factory=dict)
    # Called with the backends to run and the settings before any backend is imported (e.g. to set XLA_FLAGS,
    # which JAX reads once, when it loads); returns the settings of what is in effect.
    before_import: Callable[[Sequence[str], BenchSettings], BenchSettings] | None = field(default=None)

    def spec(self, name: str) -> CommandSpec:
        """The backend or other command `name`."""
        return self.backends[name] if name in self.backends else self.commands[name]


class BackendGroup(NamedSubcommands):
    """Lists its backends first; an unknown backend names the allowed ones."""

    argument = "BACKEND"

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # keep declaration order: backends, all, extras


def load_backend(spec: CommandSpec) -> BackendModule:
    module: BackendModule = importlib.import_module(spec.module)
    return module


def prepared_environment(group: GroupSpec, names: Sequence[str]) -> dict[str, str | int | float | bool | None]:
    """Before any backend is imported: each framework the selected commands need prepares this process's
    environment (its descriptor's `prepare_environment`, e.g. JAX's GPU memory); what each says is in effect,
    as the run's records carry it."""
    from jax_benchmarks.frameworks.descriptors import prepare_environments

    will_import = [framework.module for name in names for framework in group.spec(name).needs]
    return prepare_environments(will_import, os.environ)


def set_xla_cpu_flags(conv: CpuConv, devices: int, *, err: bool) -> CpuConv:
    """`--xla-cpu-conv` (and mnist's `--devices`) into this process's XLA_FLAGS before JAX is imported, each flag
    set said in a note, wrapped at the console's width, the flag never cut (on stderr with `err`: --json keeps
    stdout to the records); returns the convolution kernels in effect (what JAX started with, where it is
    already loaded)."""
    from jax_benchmarks.cli.console import make_console, print_whole_words

    in_effect, notes = set_before_jax(conv, devices, os.environ)
    if notes:
        console = make_console(err)
        for note in notes:
            print_whole_words(console, note)
    return in_effect


def conv_kernels_before_import(backend: str) -> Callable[[Sequence[str], BenchSettings], BenchSettings]:
    """A group's `before_import` for a JAX `backend` with `--xla-cpu-conv` (and, in mnist's settings, `--devices`):
    the flags into XLA_FLAGS before the backend loads, where it runs on the CPU; the settings then say the kernels
    in effect, which the backend records. mnist calls it itself, before a multi-process job joins its runtime."""

    def before(names: Sequence[str], settings: BenchSettings) -> BenchSettings:
        conv = getattr(settings, "xla_cpu_conv", None)
        if backend not in names or conv is None or "cpu" not in devices_to_time(settings.device):
            return settings
        devices = getattr(settings, "device_count", 1)  # host devices: mnist's `--devices N` on a CPU
        return settings.model_copy(update={"xla_cpu_conv": set_xla_cpu_flags(conv, devices,
                                                                              err=settings.json_output)})

    return before


def run_backend(module: BackendModule, spec: CommandSpec, settings: BenchSettings, run: Any,
                turns: Turns | None = None) -> None:
    """One backend's run under the GPU policy, with a GPU out-of-memory error turned into one line; `turns`: this
    process's turns in a round taken in turns (jax_benchmarks.measure.turns)."""
    try:
        with applied(settings.precision, [framework.module for framework in spec.needs]):
            profiler = profile_pass(spec, settings, run)
            for suite in module.suites(settings):
                run_suite(run, suite, repeats=settings.repeats, patterns=settings.case_patterns, memory=settings.memory,
                          device_memory=spec.device_memory, min_time_s=settings.min_time, profiler=profiler,
                          turns=turns)
    except Exception as exc:
        from jax_benchmarks.frameworks.descriptors import is_out_of_memory

        if is_out_of_memory(exc):
            raise OutOfMemory(exc) from None
        raise


def profile_pass(spec: CommandSpec, settings: BenchSettings, run: Any) -> ProfilePass | None:
    """--profile's pass for this command's framework (measure/profile.py); None without --profile."""
    if not settings.profile:
        return None
    from jax_benchmarks.frameworks.descriptors import profiler_of

    return ProfilePass.of(settings.results, run.run_id, profiler_of, run.log, settings.round_index)


def execute(
    group: GroupSpec, names: Sequence[str], settings: BenchSettings, command: str | None = None, *,
    run_id: str | None = None, show: bool = True,
) -> None:
    """Run the selected backends into one run; print the table and the JSON.

    `command` is the subcommand that was invoked (a backend or `all`): with
    --rounds N it is started again in N fresh processes (`execute_rounds`).
    `run_id` joins a run another process started (a multi-process job records under one id; a round of
    --rounds passes its parent's id as `settings.run_id`); `show=False` records without printing anything
    (the job's other processes).
    """
    refuse_missing(group, names)
    if settings.list_cases:
        list_cases(group, names, settings)
        return
    if settings.rounds > 1 and not settings.is_round:
        execute_rounds(group, command or (names[0] if len(names) == 1 else "all"), settings)
        return
    if group.before_import is not None:
        settings = group.before_import(names, settings)
    from jax_benchmarks.cli.console import RichProgress, literal, make_console, print_run_header
    from jax_benchmarks.run import Run
    from jax_benchmarks.cli.tables import comparison_table
    from jax_benchmarks.hardware.threads import pin_loaded, set_before_import

    console = make_console(settings.json_output)
    console.quiet = not show
    policy = GpuPolicy(precision=settings.precision)
    prepared = prepared_environment(group, names)
    if settings.profile:  # before a backend imports its framework, which reads them once
        from jax_benchmarks.frameworks.descriptors import registered

        set_profiler_environment((descriptor.profiler for descriptor in registered()), os.environ)
    # A round taken in turns (verdict --turns): connected to its arbiter before the frameworks load, so that no
    # other process of the round times a window while this one imports; its records say so (env `turns`).
    turns = TurnClient(settings.turns) if settings.turns is not None else None
    run = Run(group.name, settings.results, log=console.print, run_id=run_id or settings.run_id,
              round_index=settings.round_index, rounds=settings.rounds if settings.is_round else None,
              settings_env={"threads": settings.threads, "min_time_s": settings.min_time, "quick": settings.quick_sizes,
                            **({"turns": True} if turns is not None else {}), **policy.record(), **prepared},
              # Bars only on a terminal: rich draws nothing useful into a pipe or file, only blank lines.
              progress=RichProgress(console) if show and console.is_terminal else None)
    print_run_header(console, run, settings)
    started_by = os.getppid()  # a round's starter; another parent later: it ended, and the round got SIGTERM
    if settings.threads is not None:
        for note in set_before_import(settings.threads):
            console.print(f"--threads: {note}")
    try:
        with handling(signal.SIGINT, lambda signum, _: run.stop(signum)), \
                handling(signal.SIGTERM, lambda signum, _: run.stop(signum)):
            for name in names:
                console.rule(f"{group.name} {name}")
                spec = group.spec(name)
                backend = load_backend(spec)
                if settings.threads is not None:  # after the import: the backend's framework is loaded now
                    for note in pin_loaded(settings.threads):
                        console.print(f"--threads: {note}")
                run_backend(backend, spec, settings, run, turns)
            run.raise_if_stopped()
            if group.after is not None and run.records:
                group.after(run, console)  # may add records (e.g. a parity check) or raise CheckFailed
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (Terminated): say what is saved, no traceback
        # A round of --rounds counts its own records; its parent then counts the whole run's in the store.
        of_round = f" (round {settings.round_index + 1})" if settings.round_index is not None else ""
        # A round whose starter was killed (a SIGKILLed verdict) ends too (relaunch.ending_with_parent): said.
        why = ("; the process that started this round ended, so the round was stopped"
               if settings.is_round and os.getppid() != started_by else "")
        raise interrupted(
            f"Interrupted: {len(run.records)} records of run {run.run_id}{of_round} are saved in {settings.results}"
            f"{why}", interrupt_signal(exc),
        ) from None
    finally:
        # Whatever happened, show and hand out what was measured: it is already on disk.
        if run.records and show:
            console.print(comparison_table(run.records, f"{group.name}: {', '.join(names)}", group.metric_rows))
            console.print(f"{len(run.records)} records appended to {literal(settings.results)} (run {run.run_id})")
            if settings.profile:
                from jax_benchmarks.measure.breakdown import profile_lines

                for line in profile_lines(run.records):
                    console.print(f"--profile: {literal(line)}")
        if settings.json_output and show:
            click.echo(json.dumps([r.model_dump() for r in run.records]))


def list_cases(group: GroupSpec, names: Sequence[str], settings: BenchSettings) -> None:
    """--list: the cases each backend declares for these settings (its suites), without running any."""
    from jax_benchmarks.cli.listing import case_lines, declared_cases

    listed = declared_cases(group.name, [(name, load_backend(group.spec(name))) for name in names], settings)
    if settings.json_output:
        click.echo(json.dumps([case.as_json() for backend in listed for case in backend.cases if case.selected]))
        return
    for line in case_lines(group.name, listed, settings.case_patterns):
        click.echo(line)


def execute_rounds(group: GroupSpec, command: str, settings: BenchSettings) -> None:
    """--rounds N: the command in N fresh processes under one run id; print each figure's spread."""
    from jax_benchmarks.cli.console import literal, make_console
    from jax_benchmarks.store.record import new_run_id
    from jax_benchmarks.cli.rounds import run_rounds
    from jax_benchmarks.measure.rounds import spreads
    from jax_benchmarks.cli.tables import rounds_table

    console = make_console(settings.json_output)
    run_id = new_run_id()
    console.print(f"run {run_id} · {settings.rounds} rounds of `{group.name} {command}`, each in a fresh process")
    outcome = None
    try:
        outcome = run_rounds(group.name, command, settings, run_id)
    finally:
        if outcome is not None:
            console.print(rounds_table(f"{group.name} {command}: {settings.rounds} rounds", spreads(outcome.records),
                                       settings.rounds, outcome.records))
            per_round = ", ".join(f"{w:.1f}" for w in outcome.round_wall_s)
            console.print(f"{len(outcome.records)} records appended to {literal(settings.results)} (run {run_id}); "
                          f"{settings.rounds} rounds took {outcome.wall_s:.1f} s ({per_round} s)")
            if settings.json_output:
                click.echo(json.dumps([r.model_dump() for r in outcome.records]))


class SettingsCommand(ProgramCommand):
    """A command whose options are a settings model's (`model`), so that its command line can be checked in full
    without running it (`check_command_line`)."""

    def __init__(self, name: str, model: type[BenchSettings], **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.model = model


class UnavailableCommand(ProgramCommand):
    """A command whose framework is not installed: any command line is refused with `refusal()`."""

    def __init__(self, name: str, refusal: Callable[[], click.ClickException], **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self.refusal = refusal


def check_command_line(command: click.Command, args: Sequence[str], parent: click.Context | None = None) -> None:
    """Parse `args` as running `command` would (click's types, then its settings model's checks), running nothing:
    the first problem raises as the command would raise it (a UsageError: one line naming the option)."""
    with command.make_context(command.name, list(args), parent=parent) as ctx:
        if isinstance(command, SettingsCommand):
            parse_settings(command.model, ctx.params)
        elif isinstance(command, UnavailableCommand):
            raise command.refusal()


def backend_command(group: GroupSpec, name: str, names: list[str], model: type[BenchSettings], help_: str,
                    run: Callable[..., None] | None = None) -> click.Command:
    """The command `name` with `model`'s options; `run` gets the option values (default: parse them, then
    `execute` the backends `names`)."""
    def execute_backends(**values: Any) -> None:
        execute(group, names, parse_settings(model, values), command=name)

    callback = settings_options(model)(run or execute_backends)
    return SettingsCommand(name, model, callback=callback, params=callback.__click_params__, help=help_)  # type: ignore[attr-defined]


def build_group(group: GroupSpec) -> BackendGroup:
    cli = BackendGroup(group.name, help=group.help, context_settings={"help_option_names": ["-h", "--help"]})
    missing = {name: spec.missing for name, spec in group.backends.items()}
    for name, spec in group.backends.items():
        if missing[name]:
            cli.add_command(unavailable_command(f"{group.name} {name}", missing[name], spec.help))
        else:
            cli.add_command(backend_command(group, name, [name], spec.settings, spec.help))
    if group.all_settings is not None:
        cli.add_command(_all_command(group, group.all_settings, missing))
    for name, command in group.commands.items():
        cli.add_command(suite_command(group, name, command))
    return cli


def suite_command(group: GroupSpec, name: str, spec: CommandSpec) -> click.Command:
    """The command `name` of `group` that runs `spec`'s suites; listed as unavailable where it needs what is missing."""
    if spec.missing:
        return unavailable_command(f"{group.name} {name}", spec.missing, spec.help)
    return backend_command(group, name, [name], spec.settings, spec.help)


def refuse_missing(group: GroupSpec, names: Sequence[str]) -> None:
    """Any backend of `names` whose framework is not installed: refused in one line (also when asked for
    by a command other than the backend's own, e.g. `mnist evaluate flax`)."""
    for name in names:
        missing = group.spec(name).missing
        if missing:
            raise FrameworkMissing(f"{group.name} {name}", missing)


def unavailable_command(command: str, missing: tuple[Framework, ...], help_: str) -> click.Command:
    """A backend whose framework is not installed: listed (its help says so), refused in one line (exit 2)."""
    def refuse(**_: Any) -> None:
        raise FrameworkMissing(command, missing)

    # Its options are those of the backend it stands for: accept any, so the refusal names the real cause.
    return UnavailableCommand(command.split()[-1], lambda: FrameworkMissing(command, missing), callback=refuse,
                         help=f"[unavailable: {unavailable_reason(missing)}] {help_}",
                         short_help=f"[unavailable: {install_command(missing)}] {help_}",
                         context_settings={"ignore_unknown_options": True, "allow_extra_args": True})


def turn_plan(group_name: str) -> tuple[tuple[str, ...], int]:
    """How `group_name all`'s rounds are taken in turns (`verdict --turns`, cli/rounds.py's `Step.in_turns`): the
    backends `all` runs here (those installed), and the first round index taken in turns: 1 where `all` checks the
    backends against each other after they ran (`GroupSpec.after_compares`: the gradients' and the fits' agreement),
    which needs them in one process, so round 0 runs as one; else 0 (mnist's `after` only prints its table of modes,
    which the verdict builds from the records). No backends: not in turns (the group has no `all`, or fewer than two
    of its backends are installed)."""
    from jax_benchmarks.groups import GROUPS

    group: GroupSpec = importlib.import_module(GROUPS[group_name].module).SPEC
    if group.all_settings is None:
        return (), 0
    runnable = tuple(name for name, spec in group.backends.items() if spec.in_all and not spec.missing)
    return (runnable, 1 if group.after is not None and group.after_compares else 0) if len(runnable) > 1 else ((), 0)


def _all_command(group: GroupSpec, model: type[BenchSettings],
                 missing: dict[str, tuple[Framework, ...]]) -> click.Command:
    """`all`: the backends in `all` whose frameworks are installed; says which it skips and why."""
    in_all = [name for name, spec in group.backends.items() if spec.in_all]
    runnable = [name for name in in_all if not missing[name]]
    skipped = [f"{name}: {unavailable_reason(missing[name])}" for name in in_all if missing[name]]
    if not runnable:
        every = tuple(dict.fromkeys(framework for name in in_all for framework in missing[name]))
        return unavailable_command(f"{group.name} all", every, f"Run {', '.join(in_all)} side by side.")
    help_ = f"Run {', '.join(runnable)} side by side."
    if not skipped:
        return backend_command(group, "all", runnable, model, help_)
    note = f"{group.name} all: skipped {'; '.join(skipped)}"
    command = backend_command(group, "all", runnable, model, f"{help_} Skipped: {'; '.join(skipped)}.")
    command.short_help = f"{help_[:-1]} (not installed: {', '.join(n for n in in_all if missing[n])})."
    run = command.callback
    assert run is not None

    def run_noting_skipped(**values: Any) -> None:
        from jax_benchmarks.cli.console import make_console, print_whole_words

        print_whole_words(make_console(json_output=True), note)  # stderr (--json keeps stdout to the records), wrapped
        run(**values)

    command.callback = run_noting_skipped
    return command
