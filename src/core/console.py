"""Human output: stdout normally, stderr with --json so stdout carries only JSON."""

from __future__ import annotations

from rich.console import Console

from src.core.environment import environment
from src.core.results import Run
from src.core.settings import BenchSettings


def make_console(json_output: bool) -> Console:
    return Console(stderr=json_output, highlight=False)


def print_run_header(console: Console, run: Run, settings: BenchSettings) -> None:
    env = environment()
    gpu = env["gpu"] or "no GPU"
    console.print(
        f"run {run.run_id} · device {settings.device_kind} · {env['cpu']} ({env['cpu_cores']} cores) · {gpu}\n"
        f"python {env['python']} · numpy {env['numpy']} · jax {env['jax']} · flax {env['flax']} · torch {env['torch']}"
    )
    if env["gpu"]:
        console.print(
            f"GPU policy (JAX and PyTorch alike): float32 products and convolutions in {run.settings_env.get('precision')}"
            f" · convolution autotuning {'on' if run.settings_env.get('conv_autotune') else 'off'}"
            f" · JAX GPU memory {run.settings_env.get('jax_gpu_memory')}"
        )
