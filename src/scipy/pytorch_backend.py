"""`scipy pytorch`: torch.optim.LBFGS on the same loss.

This is L-BFGS, not BFGS: PyTorch ships no BFGS. With a 100-step history on a
2-parameter problem, L-BFGS keeps every curvature pair of the solve, so it
behaves much like BFGS (it rescales its initial inverse Hessian each step,
which BFGS does not). The strong-Wolfe line search is the same family as
SciPy's and JAX's; float64 tensors keep the comparison like for like.
"""

from __future__ import annotations

import torch

from src.core.devices import torch_device
from src.core.results import Run
from src.core.timing import measure, torch_sync
from src.scipy.data import MAX_ITER, START, case_name, exact_minimiser, make_sensor_data
from src.scipy.fit import Fit, raise_unless_recovered, record_solve
from src.scipy.settings import ScipySettings

BACKEND = "pytorch"
HISTORY_SIZE = 100
# torch's default 1e-9 stops L-BFGS when the loss barely changes, before the
# gradient reaches `tol` (seen: 1.8e-4 > 1e-4); SciPy's and JAX's BFGS stop on
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


def run(settings: ScipySettings, run: Run) -> None:
    device = torch_device(settings.device_kind)
    sync = torch_sync(device)
    data = make_sensor_data(settings.array_length, settings.seed)
    exact = exact_minimiser(data)
    sensor_a = torch.from_numpy(data.sensor_a).to(device)
    sensor_b = torch.from_numpy(data.sensor_b).to(device)
    params = {
        "array_length": data.length, "seed": settings.seed, "tol": settings.tol,
        "max_iter": MAX_ITER, "start": list(START), "gradient": "autograd",
        "history_size": HISTORY_SIZE, "line_search": "strong_wolfe", "tolerance_change": TOLERANCE_CHANGE,
    }

    # The first solve is timed apart: torch's first optimizer imports torch._dynamo (~1 s).
    timing = measure(lambda: fit_lbfgs(sensor_a, sensor_b, settings.tol), sync, repeats=settings.repeats)
    fit = to_fit(*fit_lbfgs(sensor_a, sensor_b, settings.tol), sensor_a, sensor_b, settings.tol)
    record_solve(
        run, backend=BACKEND, case=case_name("solve", data.length), device=settings.device_kind,
        params=params, fit=fit, timing=timing, exact=exact, tol=settings.tol,
    )
    run.log(
        f"torch.optim.LBFGS (L-BFGS, not BFGS: PyTorch has no BFGS): slope {fit.slope:.6f}, "
        f"offset {fit.offset:.6f} in {fit.iterations} iterations, {fit.evaluations} evaluations; "
        f"first solve {timing.first_call_s or 0.0:.3g} s, then {timing.median_s:.3g} s"
    )

    start = torch.tensor(START, dtype=torch.float64, device=device)
    with torch.no_grad():
        loss_time = measure(lambda: calibration_loss(start, sensor_a, sensor_b), sync, repeats=settings.repeats)
    run.record(
        backend=BACKEND, case=case_name("loss_eval", data.length), device=settings.device_kind,
        dtype="float64", params=params, measurement=loss_time,
    )
    raise_unless_recovered(BACKEND, fit, exact, settings.tol, data.length)
