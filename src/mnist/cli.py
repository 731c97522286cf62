"""`mnist flax|pytorch|all`, `mnist evaluate <backend>`, `mnist preprocess-images`.

This module imports only click, pydantic and framework-free parts of the
project: torch, jax and flax load when a backend runs. It is also the only
place that draws (rich progress bars), and the only place that may set
XLA_FLAGS (`--devices`, `--xla-cpu-conv`), which must happen before JAX is imported.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from src.core.commands import BackendSpec, GroupSpec, build_group, execute
from src.core.settings import BenchSettings, command_line, parse_settings, settings_options
from src.mnist import cluster, xla_flags
from src.mnist.progress import SilentProgress, using_progress
from src.mnist.settings import DataSettings, FlaxSettings, MnistSettings

METRIC_ROWS = ("images_per_s", "gflops", "peak_share", "loop_overhead", "accuracy", "loss")

SPEC = GroupSpec(
    name="mnist",
    help="Train the same CNN on MNIST in Flax and PyTorch; report accuracy and speed.\n\n"
    "Example: python main.py mnist flax --epochs 3",
    backends={
        "flax": BackendSpec("src.mnist.flax_backend", "Train the CNN with flax.nnx (one jitted step).", FlaxSettings),
        "pytorch": BackendSpec("src.mnist.pytorch_backend", "Train the CNN with PyTorch.", MnistSettings),
    },
    all_settings=FlaxSettings,
    metric_rows=METRIC_ROWS,
)

PREPROCESS = GroupSpec(
    name="mnist",
    help="",
    backends={"data": BackendSpec("src.mnist.preprocess", "Load and normalize the data set.", DataSettings)},
    metric_rows=("train_images", "test_images", "mean", "std"),
)


class RichProgress:
    """Epoch and step progress bars (the backends only call these hooks)."""

    def __init__(self, stderr: bool) -> None:
        self.stderr = stderr
        self.progress: Any = None

    def start(self, label: str, epochs: int, steps_per_epoch: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=self.stderr), transient=True,
        )
        self.epochs = self.progress.add_task(f"{label}epochs", total=epochs)
        self.steps = self.progress.add_task(f"{label}steps", total=steps_per_epoch)
        self.progress.start()

    def step(self) -> None:
        self.progress.advance(self.steps)

    def epoch_done(self) -> None:
        self.progress.advance(self.epochs)
        self.progress.reset(self.steps)

    def stop(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


FLAG_REASONS = {
    xla_flags.HOST_DEVICES: "the CPU is split into {value} XLA devices (one per core) for data-parallel training",
    xla_flags.YNNPACK_OPS: "YNNPACK runs dot products only, convolutions run on XLA's own kernels "
    "(--xla-cpu-conv ynnpack: jaxlib's default)",
}


def set_xla_flags(values: dict[str, Any]) -> None:
    """Set the XLA flags of a Flax run on CPU (host devices, convolution kernels). XLA reads XLA_FLAGS once,
    when JAX starts, so this runs before the flax backend is imported; if JAX is already loaded (a second
    command in one process) the flags in effect stay as they are, and the records say which those are."""
    settings = parse_settings(FlaxSettings, values)  # the same one-line errors as the command itself
    if settings.device_kind != "cpu" or "jax" in sys.modules:
        return
    flags = xla_flags.cpu_flags(settings.device_count, settings.xla_cpu_conv)
    os.environ["XLA_FLAGS"] = xla_flags.merged(os.environ.get("XLA_FLAGS", ""), flags)
    for name, value in flags.items():
        if value is not None:
            click.echo(
                f"XLA_FLAGS={name}={value} set before importing JAX: {FLAG_REASONS[name].format(value=value)}",
                err=settings.json_output,
            )


def train_callback(name: str) -> Callable[..., None]:
    """`mnist flax|pytorch|all`: one process, a process of a multi-process job (explicit options, torchrun
    or srun), or `--launch-local N`; progress bars drawn by this (CLI) layer, host devices split for JAX."""
    names = [name] if name in SPEC.backends else [n for n, s in SPEC.backends.items() if s.in_all]
    uses_jax = name in ("flax", "all")
    model = FlaxSettings if uses_jax else MnistSettings  # the settings of SPEC's flax / pytorch / all

    def callback(**values: Any) -> None:
        values = cluster.from_launcher(values, os.environ, "jax" if uses_jax else "torch")
        settings = parse_settings(model, values)
        if settings.launch_local is not None:
            launch_local(name, model, settings)
            return
        if settings.multi_process and len(names) > 1:
            raise click.UsageError("a multi-process job trains one backend: run `mnist flax` and `mnist pytorch` apart")
        if settings.multi_process and name == "pytorch" and settings.device_count > 1:
            raise click.BadParameter(
                "PyTorch runs one device per process in a multi-process job; leave it at 1", param_hint="'--devices'"
            )
        if uses_jax:
            set_xla_flags(values)
        progress = RichProgress(stderr=settings.json_output) if settings.lead else SilentProgress()
        if not settings.multi_process:
            with using_progress(progress):
                execute(SPEC, names, settings)
            return
        from src.mnist.distributed import joined

        with joined(settings, "jax" if uses_jax else "torch") as run_id, using_progress(progress):
            execute(SPEC, names, settings, run_id=run_id, show=settings.lead)

    return callback


def launch_local(name: str, model: type[MnistSettings], settings: MnistSettings) -> None:
    """`--launch-local N`: this command N times on this host as one job; the first failure ends it (exit 1)."""
    from src.core.devices import cpu_count
    from src.core.results import new_run_id

    count = settings.launch_local
    assert count is not None
    run_id = settings.run_id or new_run_id()
    base = [sys.executable, cluster.main_script(), "mnist", name,
            # From the parsed settings, not the raw values: an old option name (e.g. --num-epochs) reaches the
            # processes under the field's current one.
            *command_line(settings, skip=("launch_local", "run_id"))]
    commands = cluster.process_commands(base, count, run_id, cluster.free_port())
    click.echo(f"launching {count} local processes of `mnist {name}` (run {run_id}); process 0 reports",
               err=settings.json_output)
    result = cluster.supervise(commands, cluster.child_environment(os.environ, count, cpu_count()))
    if not result.ok:
        raise click.ClickException(
            f"run {run_id}: {result.message}; the records written before stay in {settings.results}"
        )


def build_cli() -> click.Group:
    group = build_group(SPEC)
    for name in (*SPEC.backends, "all"):
        group.commands[name].callback = train_callback(name)
    group.add_command(evaluate_command())
    group.add_command(preprocess_command())
    return group


def evaluate_command() -> click.Command:
    skip = ("mode", "dry_run", "num_epochs", "optimizer", "learning_rate", "momentum", "schedule", "comet", "devices",
            *sorted(cluster.ProcessSettings.model_fields.keys() - BenchSettings.model_fields.keys()))

    @click.command("evaluate")
    @click.argument("backend", type=click.Choice(list(SPEC.backends)))
    @settings_options(MnistSettings, exclude=skip)
    def evaluate(backend: str, **values: Any) -> None:
        """Reload a backend's checkpoint from data/checkpoints/ and report its test accuracy."""
        settings = parse_settings(MnistSettings, {**values, "mode": "evaluate", "comet": "off"})
        execute(SPEC, [backend], settings)

    return evaluate


def preprocess_command() -> click.Command:
    @click.command("preprocess-images")
    @settings_options(DataSettings)
    def preprocess(**values: Any) -> None:
        """Load the data set, print its source, sizes and normalization (mean/std)."""
        execute(PREPROCESS, ["data"], parse_settings(DataSettings, values))

    return preprocess


cli = build_cli()
