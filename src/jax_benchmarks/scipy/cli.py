"""`python main.py scipy numpy|jax|pytorch|all`: the sensor-calibration fit.

Imports only click, pydantic and framework-free modules: SciPy, JAX and
PyTorch are loaded by the backend that needs them, when it runs.
"""

from __future__ import annotations

from typing import Any

from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group
from jax_benchmarks.frameworks.descriptors import JAX, SCIPY, TORCH
from jax_benchmarks.run import Run
from jax_benchmarks.scipy.settings import ScipySettings


def summarise_fits(run: Run, console: Any) -> None:
    """After the backends: the fits side by side, then (for `all`) the agreement check."""
    from jax_benchmarks.scipy.agreement import check_agreement
    from jax_benchmarks.scipy.fit import exact_minimiser_line, fit_table, solve_records

    if not solve_records(run.records):
        return
    console.print(fit_table(run.records))
    console.print(exact_minimiser_line(run.records))
    check_agreement(run)


SPEC = GroupSpec(
    name="scipy",
    help=(
        "Sensor-calibration fit: recover slope 1.5 and offset 3 from noisy sensor data with "
        "SciPy BFGS, jax.scipy BFGS and torch L-BFGS, on the same float64 data."
    ),
    backends={
        "numpy": BackendSpec(
            "jax_benchmarks.scipy.numpy_backend",
            "scipy.optimize.minimize (BFGS, exact gradient) on the NumPy loss.",
            ScipySettings,
            needs=SCIPY.needs,
        ),
        "jax": BackendSpec(
            "jax_benchmarks.scipy.jax_backend",
            "jax.scipy.optimize.minimize (BFGS) on the jitted loss; compile vs cached calls.",
            ScipySettings,
            needs=JAX.needs,
            device_memory=JAX.device_memory,
        ),
        "pytorch": BackendSpec(
            "jax_benchmarks.scipy.pytorch_backend",
            "torch.optim.LBFGS on the same loss (L-BFGS: PyTorch has no BFGS).",
            ScipySettings,
            needs=TORCH.needs,
            device_memory=TORCH.device_memory,
        ),
    },
    all_settings=ScipySettings,
    metric_rows=("method", "first_call_s", "recompiles_new_shape", "max_rel_diff"),
    after=summarise_fits,
)

cli = build_group(SPEC)
