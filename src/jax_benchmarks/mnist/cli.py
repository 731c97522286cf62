"""`mnist flax|pytorch|all`, `mnist evaluate <backend>`, `mnist preprocess-images`.

This module imports only click, pydantic and framework-free parts of the
project: torch, jax and flax load when a backend runs. It sets XLA_FLAGS
(`--devices`, `--xla-cpu-conv`) through `conv_kernels_before_import`, as `autograd`
and `jit` do, which must happen before JAX is imported; the backend learns the kernels and
device count from the settings, never from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, cast

import click

from jax_benchmarks.cli.commands import (
    BackendGroup, BackendSpec, CommandSpec, GroupSpec, backend_command, conv_kernels_before_import, execute,
    suite_command, unavailable_command,
)
from jax_benchmarks.frameworks.descriptors import FLAX, TORCH
from jax_benchmarks.settings import command_line, parse_settings, settings_options
from jax_benchmarks.cli.relaunch import self_command
from jax_benchmarks.hardware.network import free_port
from jax_benchmarks.errors import interrupt_signal, interrupted
from jax_benchmarks.mnist import cluster
from jax_benchmarks.mnist.settings import FlaxSettings, MnistSettings
from jax_benchmarks.training.settings import DataSettings, EvaluateSettings

# The training figures, then the data set's (the load case; all of `mnist preprocess-images`).
METRIC_ROWS = ("images_per_s", "gflops", "peak_share", "loop_overhead", "accuracy", "loss",
               "train_images", "test_images", "mean", "std")


def training(name: str, names: list[str], model: type[MnistSettings]) -> Callable[..., None]:
    """What `mnist flax|pytorch|all` does with its option values: one process, a process of a multi-process job
    (explicit options, torchrun or srun), or `--launch-local N`; host devices split and convolution kernels
    chosen for JAX first."""
    uses_jax = issubclass(model, FlaxSettings)

    def run(**values: Any) -> None:
        values = cluster.from_launcher(values, os.environ, "jax" if uses_jax else "torch")
        settings = parse_settings(model, values)
        if settings.launch_local is not None:
            launch_local(name, settings)
            return
        if settings.multi_process and len(names) > 1:
            raise click.UsageError("a multi-process job trains one backend: run `mnist flax` and `mnist pytorch` apart")
        if settings.compile_mode is not None and "pytorch" not in names:
            raise click.BadParameter("torch.compile compiles PyTorch's step; Flax always jits its step: leave it "
                                     "out, or use `mnist pytorch|all --compile`", param_hint="'--compile'")
        if settings.multi_process and name == "pytorch" and settings.device_count > 1:
            raise click.BadParameter(
                "PyTorch runs one device per process in a multi-process job; leave it at 1", param_hint="'--devices'"
            )
        if not SPEC.backends["flax"].missing:  # for JAX only: nothing is said about it where JAX does not run
            settings = cast(MnistSettings, conv_kernels_before_import("flax")(names, settings))
        if not settings.multi_process:
            execute(SPEC, names, settings, command=name)
            return
        from jax_benchmarks.mnist.distributed import joined

        with joined(settings, "jax" if uses_jax else "torch") as run_id:
            execute(SPEC, names, settings, command=name, run_id=run_id, show=settings.lead)

    return run


def print_modes(run: Any, console: Any) -> None:
    """After the backends ran (before their figures' table): the table of modes of the run's training
    (mnist/findings.py's `modes_table`), one row per framework × mode × precision, in the first layout that fits
    the console: a row per side, else a column per side, else each side's name on a line of its own with its
    figures under it (cli/tables.py: nothing cut). Under it, why a figure is '—', and which figures were taken on a
    busy machine (none is ranked). Nothing for a run that trained nothing (`mnist evaluate`, `preprocess-images`)."""
    from jax_benchmarks.cli.tables import Cell, Fitting, Sheet, contention_notes, pieces_of
    from jax_benchmarks.mnist.findings import modes_table
    from jax_benchmarks.training.names import kind_of

    trained = [r for r in run.records if kind_of(r.case) in ("step", "epoch")]
    if not trained:
        return
    table = modes_table(run.records)
    title = "mnist: the table of modes (framework × mode × precision)"
    caption = "\n".join([*table.notes, *contention_notes(trained)])
    by_side: list[tuple[str, list[tuple[str, list[Cell | None]]]]] = [
        (row[0], [("", [pieces_of(cell) for cell in row[1:]])]) for row in table.rows]
    by_figure: list[tuple[str, list[tuple[str, list[Cell | None]]]]] = [
        (header, [("", [pieces_of(row[index]) for row in table.rows])])
        for index, header in enumerate(table.headers) if index]
    rows = Sheet(title, caption, list(table.headers[1:]), by_side, name_header=table.headers[0])
    columns = Sheet(title, caption, [row[0] for row in table.rows], by_figure, name_header="figure")
    console.print(Fitting((rows.wide, columns.wide, rows.vertical)))


TRAINED = ("flax", "pytorch")
SPEC = GroupSpec(
    name="mnist",
    help="Train the same CNN on MNIST in Flax and PyTorch; report accuracy and speed.\n\n"
    "Example: python main.py mnist flax --epochs 3",
    backends={
        "flax": BackendSpec("jax_benchmarks.mnist.flax_backend", "Train the CNN with flax.nnx (one jitted step).", FlaxSettings,
                            needs=FLAX.needs, device_memory=FLAX.device_memory),
        "pytorch": BackendSpec("jax_benchmarks.mnist.pytorch_backend", "Train the CNN with PyTorch.", MnistSettings,
                               needs=TORCH.needs, device_memory=TORCH.device_memory),
    },
    all_settings=FlaxSettings,
    metric_rows=METRIC_ROWS,
    after=print_modes,
    after_compares=False,  # the table of modes: it prints the records, checks nothing across backends
    commands={
        # The data pipeline alone (NumPy); its records name the column "data".
        "preprocess-images": CommandSpec(
            "jax_benchmarks.mnist.preprocess",
            "Load the data set, print its source, sizes and normalization (mean/std).", DataSettings),
    },
)


def launch_local(name: str, settings: MnistSettings) -> None:
    """`--launch-local N`: this command N times on this host as one job; the first failure ends it (exit 1)."""
    from jax_benchmarks.store.location import for_children
    from jax_benchmarks.store.record import new_run_id

    count = settings.launch_local
    assert count is not None
    run_id = settings.run_id or new_run_id()
    with for_children(settings.results) as given:  # the store without its password on the command lines
        launch_job(name, settings, settings.model_copy(update={"results": given}), count, run_id)


def launch_job(name: str, settings: MnistSettings, passed_on: MnistSettings, count: int, run_id: str) -> None:
    """`launch_local`'s job: its processes started with `passed_on`'s options, `settings` named where shown."""
    from jax_benchmarks.hardware.devices import cpu_count

    base = [*self_command(), "mnist", name,
            # From the parsed settings, not the raw values: an old option name (e.g. --num-epochs) reaches the
            # processes under the field's current one.
            *command_line(passed_on, skip=("launch_local", "run_id"))]
    commands = cluster.process_commands(base, count, run_id, free_port())
    click.echo(f"launching {count} local processes of `mnist {name}` (run {run_id}); process 0 reports",
               err=settings.json_output)
    try:
        result = cluster.supervise(commands, cluster.child_environment(os.environ, count, cpu_count()))
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the processes are stopped; say what they saved
        raise interrupted(f"Interrupted: the job's {count} processes were stopped; "
                          f"{cluster.saved_records(settings.results, run_id)}", interrupt_signal(exc)) from None
    if not result.ok:
        raise click.ClickException(
            f"run {run_id}: {result.message}; the records written before stay in {settings.results}"
        )


def build_cli() -> click.Group:
    """flax, pytorch and all train (`training`); evaluate and preprocess-images parse their options and run."""
    group = BackendGroup(SPEC.name, help=SPEC.help, context_settings={"help_option_names": ["-h", "--help"]})
    missing = {name: SPEC.backends[name].missing for name in TRAINED}
    for name in TRAINED:
        spec = SPEC.backends[name]
        if missing[name]:  # listed as the other groups list it: unavailable, saying what to install
            group.add_command(unavailable_command(f"{SPEC.name} {name}", missing[name], spec.help))
            continue
        group.add_command(backend_command(SPEC, name, [name], spec.settings, spec.help,
                                          run=training(name, [name], cast("type[MnistSettings]", spec.settings))))
    runnable = [name for name in TRAINED if not missing[name]]
    absent = f" (not installed: {', '.join(n for n in TRAINED if missing[n])})" if len(runnable) < len(TRAINED) else ""
    if runnable:
        group.add_command(backend_command(SPEC, "all", runnable, FlaxSettings,
                                          f"Run {', '.join(runnable)} side by side{absent}.",
                                          run=training("all", runnable, FlaxSettings)))
    else:
        every = tuple(dict.fromkeys(framework for name in TRAINED for framework in missing[name]))
        group.add_command(unavailable_command(f"{SPEC.name} all", every, f"Run {', '.join(TRAINED)} side by side."))
    group.add_command(evaluate_command())
    for name, command in SPEC.commands.items():
        group.add_command(suite_command(SPEC, name, command))
    return group


def evaluate_command() -> click.Command:
    @click.command("evaluate")
    @click.argument("backend", type=click.Choice(list(TRAINED)))
    # Its own settings (the data, the test batch); not --rounds: a round restarts a backend command, which trains.
    @settings_options(EvaluateSettings, exclude=("rounds",))
    def evaluate(backend: str, **values: Any) -> None:
        """Reload a backend's checkpoint from data/checkpoints/ and report its test accuracy."""
        execute(SPEC, [backend], parse_settings(EvaluateSettings, values))

    return evaluate


cli = build_cli()
