"""`autograd`: gradients of f(x) = 0.2·x + sin(x) + cos(2x) in JAX, PyTorch and the project's own engine.

Imports only click-side modules: the backends (and jax/torch) load when a command runs.
"""

from __future__ import annotations

from typing import Any

from jax_benchmarks.autograd.settings import AllSettings, EngineSettings, FlaxCnnSettings, TorchCnnSettings
from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group, conv_kernels_before_import
from jax_benchmarks.frameworks.descriptors import JAX, TORCH


def check_agreement(run: Any, _console: Any) -> None:
    """After the backends: compare f and f′ across backends (only when several ran)."""
    from jax_benchmarks.autograd.cases import record_gradient_agreement

    record_gradient_agreement(run)


SPEC = GroupSpec(
    name="autograd",
    help=(
        "Gradients of f(x) = 0.2·x + sin(x) + cos(2x): prints f and f′ at 3.0 and at linspace(0, 4π, 20), "
        "times f′ at N points (linspace(0, 10π, N)); and the mnist CNN's train step (batch --cnn-batch) in "
        "Flax, PyTorch eager and the project's engine. --device all times on every visible device "
        "(CPU, and the GPU when one is visible). Example: python main.py autograd all --plot-graph"
    ),
    backends={
        "jax": BackendSpec(
            "jax_benchmarks.autograd.jax_backend",
            "JAX: typed_grad + vmap, with and without jit; the mnist CNN's jitted train step in Flax.", FlaxCnnSettings,
            needs=JAX.needs, device_memory=JAX.device_memory,
        ),
        "pytorch": BackendSpec(
            "jax_benchmarks.autograd.pytorch_backend",
            "PyTorch: backward() loop; func.vmap(func.grad); backward() on the sum (--compile: also with f compiled); "
            "the mnist CNN's eager train step.",
            TorchCnnSettings,
            needs=TORCH.needs,
            device_memory=TORCH.device_memory,
        ),
        "numpy": BackendSpec(
            "jax_benchmarks.autograd.numpy_backend",
            "Our reverse-mode engine on NumPy arrays; the mnist CNN's train step in it.",
            EngineSettings,
        ),
    },
    all_settings=AllSettings,
    metric_rows=("first_call_s", "images_per_s"),
    after=check_agreement,
    # --xla-cpu-conv before JAX loads: the Flax CNN case records the kernels (`params.xla_cpu_conv`).
    before_import=conv_kernels_before_import("jax"),
)

cli = build_group(SPEC)
