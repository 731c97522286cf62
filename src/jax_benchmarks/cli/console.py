"""Human output: stdout normally, stderr with --json so stdout carries only JSON."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from jax_benchmarks.hardware.devices import device_text
from jax_benchmarks.hardware.environment import environment
from jax_benchmarks.run import Run
from jax_benchmarks.settings import BenchSettings


def make_console(json_output: bool) -> Console:
    return Console(stderr=json_output, highlight=False)


def print_run_header(console: Console, run: Run, settings: BenchSettings) -> None:
    env = environment()
    gpu = env["gpu"] or "no GPU"
    console.print(
        f"run {run.run_id} · device {device_text(settings.device)} · {env['cpu']} ({env['cpu_cores']} cores) · {gpu}\n"
        f"python {env['python']} · numpy {env['numpy']} · jax {env['jax']} · flax {env['flax']} · torch {env['torch']}"
    )
    if env["gpu"]:
        console.print(
            f"GPU policy (JAX and PyTorch alike): float32 products and convolutions in {run.settings_env.get('precision')}"
            f" · convolution autotuning {'on' if run.settings_env.get('conv_autotune') else 'off'}"
            f" · JAX GPU memory {run.settings_env.get('jax_gpu_memory')}"
        )


class RichProgress:
    """Progress bars for `jax_benchmarks.measure.progress.Progress`: one line per open bar, removed when the work ends.

    Drawn on the console's stream (stderr with --json), so stdout stays clean JSON.
    """

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bars: Any = None  # a rich.progress.Progress while any bar is open
        self.open: list[Any] = []  # task ids, innermost last

    def start(self, label: str, total: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if self.bars is None:
            self.bars = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                TextColumn("{task.fields[detail]}"), console=self.console, transient=True,
            )
            self.bars.start()
        self.open.append(self.bars.add_task(label, total=total, detail=""))

    def advance(self, detail: str = "") -> None:
        if self.open:
            self.bars.update(self.open[-1], advance=1, detail=detail)

    def stop(self) -> None:
        if self.open:
            self.bars.remove_task(self.open.pop())
        if not self.open and self.bars is not None:
            self.bars.stop()
            self.bars = None
