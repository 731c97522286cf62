"""`scipy numpy`: scipy.optimize.minimize (BFGS) on the NumPy loss.

The gradient is written out by hand and passed as `jac=True`: JAX and PyTorch
get exact gradients from autodiff, so SciPy gets an exact one too instead of
finite differences (which would cost 3 loss calls per gradient) - like for like.
"""

from __future__ import annotations

import numpy as np

# Absolute import: this package is `jax_benchmarks.scipy`, so `scipy` is the real SciPy.
import scipy.optimize  # type: ignore[import-untyped]

from jax_benchmarks.frameworks.arrays import cpu_only_suites
from jax_benchmarks.measure.harness import Suite, Timed
from jax_benchmarks.scipy.cases import Calibration, calibration_suite
from jax_benchmarks.scipy.data import MAX_ITER, START, Array, SensorData
from jax_benchmarks.scipy.fit import Fit
from jax_benchmarks.scipy.settings import ScipySettings

BACKEND = "numpy"


def calibration_loss(params: Array, sensor_a: Array, sensor_b: Array) -> float:
    """rmse_with_calibration(slope, offset) = sqrt(mean((A - (B - offset)/slope)^2))."""
    slope, offset = params
    return float(np.sqrt(np.mean((sensor_a - (sensor_b - offset) / slope) ** 2)))


def calibration_loss_and_grad(params: Array, sensor_a: Array, sensor_b: Array) -> tuple[float, Array]:
    """The loss and its exact gradient.

    With r = A - (B - offset)/slope and L = sqrt(mean(r^2)):
    dL/dslope = mean(r * (B - offset)) / (slope^2 L), dL/doffset = mean(r) / (slope L).
    """
    slope, offset = params
    shifted = sensor_b - offset
    residual = sensor_a - shifted / slope
    loss = float(np.sqrt(np.mean(residual**2)))
    grad = np.array([np.mean(residual * shifted) / (slope**2 * loss), np.mean(residual) / (slope * loss)])
    return loss, grad


def fit_bfgs(data: SensorData, tol: float) -> Fit:
    """SciPy's BFGS from (1, 0); `tol` becomes its gtol (max-norm of the gradient)."""
    result = scipy.optimize.minimize(
        calibration_loss_and_grad, np.array(START), args=(data.sensor_a, data.sensor_b),
        jac=True, method="BFGS", tol=tol, options={"maxiter": MAX_ITER},
    )
    return Fit(
        method="BFGS",
        slope=float(result.x[0]),
        offset=float(result.x[1]),
        loss=float(result.fun),
        iterations=int(result.nit),
        evaluations=int(result.nfev),
        grad_norm=float(np.max(np.abs(result.jac))),
        stop_reason=str(result.message),
    )


def suites(settings: ScipySettings) -> list[Suite]:
    start = np.array(START)
    return cpu_only_suites(BACKEND, "SciPy", settings.device, lambda: [calibration_suite(settings, Calibration(
        backend=BACKEND, device="cpu",
        params={
            "array_length": settings.array_length, "seed": settings.seed, "tol": settings.tol,
            "max_iter": MAX_ITER, "start": list(START), "gradient": "analytic",
        },
        solver="scipy.optimize.minimize BFGS",
        inputs=lambda data: data,
        solve=lambda data: Timed(lambda: fit_bfgs(data, settings.tol)),
        to_fit=lambda _data, fit: fit,
        loss=lambda data: Timed(lambda: calibration_loss(start, data.sensor_a, data.sensor_b)),
    ))])
