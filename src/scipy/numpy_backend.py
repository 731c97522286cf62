"""`scipy numpy`: scipy.optimize.minimize (BFGS) on the NumPy loss.

The gradient is written out by hand and passed as `jac=True`: JAX and PyTorch
get exact gradients from autodiff, so SciPy gets an exact one too instead of
finite differences (which would cost 3 loss calls per gradient) - like for like.
"""

from __future__ import annotations

import numpy as np

# Absolute import: this package is `src.scipy`, so `scipy` is the real SciPy.
import scipy.optimize  # type: ignore[import-untyped]

from src.core.results import Run
from src.core.timing import measure, no_sync
from src.scipy.data import MAX_ITER, START, Array, SensorData, case_name, exact_minimiser, make_sensor_data
from src.scipy.fit import Fit, raise_unless_recovered, record_solve
from src.scipy.settings import ScipySettings

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


def run(settings: ScipySettings, run: Run) -> None:
    data = make_sensor_data(settings.array_length, settings.seed)
    exact = exact_minimiser(data)
    if settings.device_kind != "cpu":
        run.log("SciPy runs on the CPU only: the numpy figures are CPU figures.")
    params = {
        "array_length": data.length, "seed": settings.seed, "tol": settings.tol,
        "max_iter": MAX_ITER, "start": list(START), "gradient": "analytic",
    }

    # Every solve starts from (1, 0) on the same data, so the timed solves and this one agree.
    timing = measure(lambda: fit_bfgs(data, settings.tol), no_sync, repeats=settings.repeats)
    fit = fit_bfgs(data, settings.tol)
    record_solve(
        run, backend=BACKEND, case=case_name("solve", data.length), device="cpu", params=params,
        fit=fit, timing=timing, exact=exact, tol=settings.tol,
    )
    run.log(
        f"scipy.optimize.minimize BFGS: slope {fit.slope:.6f}, offset {fit.offset:.6f} "
        f"in {fit.iterations} iterations, {fit.evaluations} evaluations; first solve "
        f"{timing.first_call_s or 0.0:.3g} s, then {timing.median_s:.3g} s"
    )

    start = np.array(START)
    loss_time = measure(
        lambda: calibration_loss(start, data.sensor_a, data.sensor_b), no_sync, repeats=settings.repeats
    )
    run.record(
        backend=BACKEND, case=case_name("loss_eval", data.length), device="cpu", dtype="float64",
        params=params, measurement=loss_time,
    )
    raise_unless_recovered(BACKEND, fit, exact, settings.tol, data.length)
