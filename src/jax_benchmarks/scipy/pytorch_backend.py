"""`scipy pytorch`: torch.optim.LBFGS on the same loss.

This is L-BFGS, not BFGS: PyTorch ships no BFGS. With a 100-step history on a
2-parameter problem, L-BFGS keeps every curvature pair of the solve, so it
behaves much like BFGS (it rescales its initial inverse Hessian each step,
which BFGS does not). The strong-Wolfe line search is the same family as
SciPy's and JAX's; float64 tensors keep the comparison like for like.
"""

from __future__ import annotations

import torch

from jax_benchmarks.frameworks.descriptors import torch_device, torch_sync
from jax_benchmarks.measure.harness import Suite, Timed
from jax_benchmarks.scipy.cases import Calibration, calibration_suite
from jax_benchmarks.scipy.data import MAX_ITER, START, SensorData
from jax_benchmarks.scipy.fit import Fit
from jax_benchmarks.scipy.settings import ScipySettings

BACKEND = "pytorch"
HISTORY_SIZE = 100
# torch's default 1e-9 stops L-BFGS when the loss barely changes, before the
# gradient reaches `tol` (a max-norm of 1.8e-4 against a tol of 1e-4 on the default data); SciPy's and JAX's BFGS stop on
# the gradient alone, so this is lowered to make the stopping rules alike.
TOLERANCE_CHANGE = 1e-12


def calibration_loss(params: torch.Tensor, sensor_a: torch.Tensor, sensor_b: torch.Tensor) -> torch.Tensor:
    """rmse_with_calibration(slope, offset) = sqrt(mean((A - (B - offset)/slope)^2))."""
    slope, offset = params[0], params[1]
    return torch.sqrt(torch.mean((sensor_a - (sensor_b - offset) / slope) ** 2))


def fit_lbfgs(sensor_a: torch.Tensor, sensor_b: torch.Tensor, tol: float) -> tuple[torch.Tensor, int, int]:
    """L-BFGS from (1, 0) until the gradient's max-norm is below `tol` (its tolerance_grad).

    One `step` runs the whole solve (max_iter iterations). Returns the
    parameters, the iterations and the loss-and-gradient evaluations.
    """
    params = torch.tensor(START, dtype=torch.float64, device=sensor_a.device, requires_grad=True)
    optimizer = torch.optim.LBFGS(
        [params], lr=1.0, max_iter=MAX_ITER, tolerance_grad=tol, tolerance_change=TOLERANCE_CHANGE,
        history_size=HISTORY_SIZE, line_search_fn="strong_wolfe",
    )

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        loss = calibration_loss(params, sensor_a, sensor_b)
        loss.backward()  # type: ignore[no-untyped-call]
        return loss

    optimizer.step(closure)  # type: ignore[no-untyped-call]
    state = optimizer.state[params]
    return params.detach(), int(state["n_iter"]), int(state["func_evals"])


def to_fit(params: torch.Tensor, iterations: int, evaluations: int,
           sensor_a: torch.Tensor, sensor_b: torch.Tensor, tol: float) -> Fit:
    """The fit, with the loss and gradient evaluated afresh at the answer (not timed)."""
    at = params.clone().requires_grad_(True)
    loss = calibration_loss(at, sensor_a, sensor_b)
    (grad,) = torch.autograd.grad(loss, at)
    return Fit(
        method="L-BFGS",
        slope=float(params[0]),
        offset=float(params[1]),
        loss=float(loss.detach()),
        iterations=iterations,
        evaluations=evaluations,
        grad_norm=float(grad.abs().max()),
        # LBFGS does not say why it stopped; these are its three stopping rules.
        stop_reason=(
            "gradient below tolerance" if float(grad.abs().max()) <= tol
            else "maximum iterations reached" if iterations >= MAX_ITER
            else "loss or step change below tolerance_change"
        ),
    )


Sensors = tuple[torch.Tensor, torch.Tensor]


def suites(settings: ScipySettings) -> list[Suite]:
    tol = settings.tol

    def on_device(data: SensorData) -> Sensors:
        device = torch_device(settings.device_kind)
        return torch.from_numpy(data.sensor_a).to(device), torch.from_numpy(data.sensor_b).to(device)

    def solve(sensors: Sensors) -> Timed[tuple[torch.Tensor, int, int]]:
        # The first solve is timed apart: torch's first optimizer imports torch._dynamo (~1 s).
        return Timed(lambda: fit_lbfgs(*sensors, tol), torch_sync(sensors[0].device))

    def read_fit(sensors: Sensors, result: tuple[torch.Tensor, int, int]) -> Fit:
        params, iterations, evaluations = result
        return to_fit(params, iterations, evaluations, sensors[0], sensors[1], tol)

    def loss(sensors: Sensors) -> Timed[torch.Tensor]:
        # No input requires a gradient, so autograd records nothing for these calls.
        start = torch.tensor(START, dtype=torch.float64, device=sensors[0].device)
        return Timed(lambda: calibration_loss(start, *sensors), torch_sync(sensors[0].device))

    return [calibration_suite(settings, Calibration(
        backend=BACKEND, device=settings.device_kind,
        params={
            "array_length": settings.array_length, "seed": settings.seed, "tol": tol,
            "max_iter": MAX_ITER, "start": list(START), "gradient": "autograd",
            "history_size": HISTORY_SIZE, "line_search": "strong_wolfe", "tolerance_change": TOLERANCE_CHANGE,
        },
        solver="torch.optim.LBFGS (L-BFGS, not BFGS: PyTorch has no BFGS)",
        inputs=on_device,
        solve=solve,
        to_fit=read_fit,
        loss=loss,
    ))]
