"""`xla`: random matrices, reductions, matmul and inverse in NumPy, PyTorch and JAX.

Imports only click, pydantic and framework-free modules: a backend's framework
is imported when that backend runs.
"""

from __future__ import annotations

from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group
from jax_benchmarks.frameworks.descriptors import JAX, TORCH
from jax_benchmarks.xla.settings import XlaSettings

SPEC = GroupSpec(
    name="xla",
    help=(
        "Two random N×N matrices: mean, sum, product (GFLOP/s), inverse and the identity "
        "residual max|C·C⁻¹ − I|, checked and timed per backend."
    ),
    backends={
        "numpy": BackendSpec("jax_benchmarks.xla.numpy_backend", "NumPy (BLAS/LAPACK on the CPU).", XlaSettings),
        "pytorch": BackendSpec("jax_benchmarks.xla.pytorch_backend", "PyTorch on the CPU or a CUDA GPU.", XlaSettings,
                               needs=TORCH.needs, device_memory=TORCH.device_memory),
        "jax": BackendSpec("jax_benchmarks.xla.jax_backend", "JAX (XLA), jit-compiled, on the CPU or a GPU.", XlaSettings,
                           needs=JAX.needs, device_memory=JAX.device_memory),
    },
    all_settings=XlaSettings,
    metric_rows=("gflops", "residual"),
)

cli = build_group(SPEC)
