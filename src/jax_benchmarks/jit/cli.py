"""`jit`: compiled vs eager execution across array sizes, and training with and without jit.

Imports only click, pydantic and framework-free modules: NumPy, PyTorch, JAX
and Flax are imported when their backend runs.
"""

from __future__ import annotations

from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group, conv_kernels_before_import
from jax_benchmarks.frameworks.descriptors import FLAX, JAX, TORCH
from jax_benchmarks.jit.settings import JitTrainingSettings, SweepSettings

SWEEP = "f(x) = 0.2·x + sin(x) + cos(2x) over array lengths 1e4…1e7, total_items / length calls per loop"

SPEC = GroupSpec(
    name="jit",
    help=(
        "Compiled vs eager: the same function swept over array lengths in NumPy, PyTorch "
        "(eager, torch.compile) and JAX (eager, jax.jit); and the mnist CNN's Flax training with and without jit."
    ),
    backends={
        "numpy": BackendSpec("jax_benchmarks.jit.numpy_backend", f"NumPy eager, the baseline: {SWEEP}.", SweepSettings),
        "pytorch": BackendSpec("jax_benchmarks.jit.pytorch_backend", f"PyTorch eager vs torch.compile: {SWEEP}.", SweepSettings,
                               needs=TORCH.needs, device_memory=TORCH.device_memory),
        "jax": BackendSpec("jax_benchmarks.jit.jax_backend", f"JAX eager vs jax.jit: {SWEEP}.", SweepSettings,
                           needs=JAX.needs, device_memory=JAX.device_memory),
        "flax": BackendSpec(
            "jax_benchmarks.jit.flax_backend",
            "The mnist group's CNN trained on MNIST by its flax.nnx trainer with the train step not jitted "
            "and jitted: mnist's training cases per mode (the step, compile apart; each epoch timed once; "
            "validation), compilations, test accuracy. --repeats: the step's samples.",
            JitTrainingSettings,
            in_all=False,
            needs=FLAX.needs,
            device_memory=FLAX.device_memory,
        ),
    },
    all_settings=SweepSettings,
    # Not "accuracy" (jit compares speed): jit flax's test accuracies are in the run's summary line and the epoch lines;
    # `report` shows them, and each epoch's training accuracy, under labels that say which (cli/tables.metric_label).
    metric_rows=("items_per_s", "images_per_s", "speedup"),
    # --xla-cpu-conv before JAX loads, as `mnist flax` sets it: the same CNN on the same kernels in both groups.
    before_import=conv_kernels_before_import("flax"),
)

cli = build_group(SPEC)
