"""`scipy jax`: jax.scipy.optimize.minimize (BFGS) on the jitted loss.

Everything runs in float64 (`jax.enable_x64` as a context manager, so the
setting does not leak into other groups run in the same process) to compare
like for like with SciPy and PyTorch.

Note: jax.scipy.optimize.minimize accepts `tol` but ignores it (jax 0.10.2
passes only `options` to its BFGS, whose gtol defaults to 1e-5), so the
tolerance is given as `options={"gtol": ...}`.

The seed's lesson is shown on the loss: the first call traces and compiles,
later calls reuse the compiled code, and an input of a different shape
compiles again - counted with the jitted function's cache size.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import jax.scipy.optimize
import numpy as np

from src.core.devices import jax_device
from src.core.results import Run
from src.core.timing import jax_sync, measure, time_call
from src.core.typed import typed_jit
from src.scipy.data import MAX_ITER, START, case_name, exact_minimiser, make_sensor_data
from src.scipy.fit import Fit, raise_unless_recovered, record_solve
from src.scipy.settings import ScipySettings

BACKEND = "jax"
Solver = Callable[[jax.Array, jax.Array, jax.Array], jax.scipy.optimize.OptimizeResults]


def calibration_loss(params: jax.Array, sensor_a: jax.Array, sensor_b: jax.Array) -> jax.Array:
    """rmse_with_calibration(slope, offset) = sqrt(mean((A - (B - offset)/slope)^2))."""
    slope, offset = params[0], params[1]
    return jnp.sqrt(jnp.mean((sensor_a - (sensor_b - offset) / slope) ** 2))


def fresh_jitted_loss() -> Callable[[jax.Array, jax.Array, jax.Array], jax.Array]:
    """The jitted loss with an empty compilation cache.

    JAX keys its compilation cache on the Python function, shared by every
    `jax.jit` wrapper of it and kept for the life of the process; a new
    function object starts from zero, so the counts below are this run's.
    """

    def loss(params: jax.Array, sensor_a: jax.Array, sensor_b: jax.Array) -> jax.Array:
        return calibration_loss(params, sensor_a, sensor_b)

    return typed_jit(loss)


def make_solver(tol: float) -> Solver:
    """The whole BFGS solve jitted as one program (its while loop included).

    A new function each time, so each run compiles it afresh (see fresh_jitted_loss).
    """
    loss = typed_jit(calibration_loss)

    def solve(start: jax.Array, sensor_a: jax.Array, sensor_b: jax.Array) -> jax.scipy.optimize.OptimizeResults:
        return jax.scipy.optimize.minimize(
            loss, start, args=(sensor_a, sensor_b), method="BFGS",
            options={"gtol": tol, "maxiter": MAX_ITER},
        )

    return typed_jit(solve)


def stop_reason(status: int) -> str:
    """jax's BFGS status: 0 converged, 1 max iterations, 2 + line-search status when it fails."""
    if status == 0:
        return "gradient below tolerance"
    if status == 1:
        return "maximum iterations reached"
    if status >= 2:
        # Line-search status 1 is "zoom failed": a known jax BFGS weakness where
        # SciPy's line search succeeds (jax-ml/jax#4594).
        return f"line search failed (status {status})"
    return f"undefined (status {status})"


def to_fit(result: jax.scipy.optimize.OptimizeResults) -> Fit:
    x = np.asarray(result.x)
    return Fit(
        method="BFGS",
        slope=float(x[0]),
        offset=float(x[1]),
        loss=float(result.fun),
        iterations=int(result.nit),
        evaluations=int(result.nfev),
        grad_norm=float(np.max(np.abs(np.asarray(result.jac)))),
        stop_reason=stop_reason(int(result.status)),
    )


def cache_size(jitted: object) -> int:
    """How many compiled versions a jitted function holds (one per input shape/dtype)."""
    size: Callable[[], int] = getattr(jitted, "_cache_size")
    return int(size())


def run(settings: ScipySettings, run: Run) -> None:
    with jax.enable_x64(True):
        _run_x64(settings, run)


def _run_x64(settings: ScipySettings, run: Run) -> None:
    device = jax_device(settings.device_kind)
    data = make_sensor_data(settings.array_length, settings.seed)
    exact = exact_minimiser(data)
    sensor_a = jax.device_put(data.sensor_a, device)
    sensor_b = jax.device_put(data.sensor_b, device)
    start = jax.device_put(np.array(START), device)
    params = {
        "array_length": data.length, "seed": settings.seed, "tol": settings.tol,
        "max_iter": MAX_ITER, "start": list(START), "gradient": "autodiff",
    }

    # The first solve compiles the whole program; measure times it apart from the steady solves.
    solve = make_solver(settings.tol)
    timing = measure(lambda: solve(start, sensor_a, sensor_b), jax_sync, repeats=settings.repeats)
    fit = to_fit(solve(start, sensor_a, sensor_b))
    record_solve(
        run, backend=BACKEND, case=case_name("solve", data.length), device=settings.device_kind,
        params=params, fit=fit, timing=timing, exact=exact, tol=settings.tol,
        compile_s=timing.compile_s,
    )
    run.log(
        f"jax.scipy.optimize.minimize BFGS: slope {fit.slope:.6f}, offset {fit.offset:.6f} in "
        f"{fit.iterations} iterations, {fit.evaluations} evaluations; first solve "
        f"{timing.first_call_s or 0.0:.3g} s (trace + compile), then {timing.median_s:.3g} s"
    )

    record_loss_eval(settings, run, params, start, sensor_a, sensor_b)
    raise_unless_recovered(BACKEND, fit, exact, settings.tol, data.length)


def record_loss_eval(
    settings: ScipySettings, run: Run, params: dict[str, object],
    start: jax.Array, sensor_a: jax.Array, sensor_b: jax.Array,
) -> None:
    """Time the jitted loss (compile apart) and count its compilations."""
    length = int(sensor_a.shape[0])
    loss = fresh_jitted_loss()
    before = cache_size(loss)
    timing = measure(lambda: loss(start, sensor_a, sensor_b), jax_sync, repeats=settings.repeats)
    after_same_shape = cache_size(loss)

    # A differently-shaped input (half the samples) cannot reuse the compiled code.
    half = length // 2
    short_a, short_b = sensor_a[:half], sensor_b[:half]
    jax_sync((short_a, short_b))
    _, new_shape_first_s = time_call(lambda: loss(start, short_a, short_b), jax_sync)
    after_new_shape = cache_size(loss)
    _, new_shape_again_s = time_call(lambda: loss(start, short_a, short_b), jax_sync)
    after_repeat = cache_size(loss)

    compiles_same_shape = after_same_shape - before
    recompiles_new_shape = after_new_shape - after_same_shape
    run.record(
        backend=BACKEND, case=case_name("loss_eval", length), device=settings.device_kind, dtype="float64",
        params=params, measurement=timing, compile_s=timing.compile_s,
        metrics={
            "calls": timing.repeats * timing.calls_per_sample + timing.warmup + 1,
            "compiles_same_shape": compiles_same_shape,
            "recompiles_new_shape": recompiles_new_shape,
            "recompiles_repeat_new_shape": after_repeat - after_new_shape,
            "jit_cache_entries": after_repeat,
            "new_shape_first_call_s": new_shape_first_s,
            "new_shape_cached_call_s": new_shape_again_s,
        },
        checks={
            "one_compile_for_same_shape": compiles_same_shape == 1,
            "new_shape_compiles_again": recompiles_new_shape == 1,
        },
    )
    run.log(
        f"jitted loss: first call {timing.first_call_s or 0.0:.3g} s (trace + compile), then "
        f"{timing.median_s:.3g} s per cached call; {compiles_same_shape} compilation for "
        f"{timing.repeats * timing.calls_per_sample + timing.warmup + 1} same-shape calls. A length-{half} input "
        f"compiled again ({recompiles_new_shape} new compilation, first call {new_shape_first_s:.3g} s, "
        f"next {new_shape_again_s:.3g} s): {after_repeat} compiled versions cached"
    )
