"""`scipy jax`: jax.scipy.optimize.minimize (BFGS) on the jitted loss.

Everything runs in float64 (`jax.enable_x64` as a context manager, so the
setting does not leak into other groups run in the same process) to compare
like for like with SciPy and PyTorch.

Note: jax.scipy.optimize.minimize accepts `tol` but ignores it (jax 0.10.2
passes only `options` to its BFGS, whose gtol defaults to 1e-5), so the
tolerance is given as `options={"gtol": ...}`.

The loss shows what jit costs and saves: the first call traces and compiles,
later calls reuse the compiled code, and an input of a different shape
compiles again (its own case) - counted by how often JAX traced the function.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import jax.scipy.optimize
import numpy as np

from jax_benchmarks.frameworks.descriptors import jax_device, jax_sync
from jax_benchmarks.measure.harness import Judgement, Suite, Timed
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.frameworks.typed import jit_cache_size, typed_jit
from jax_benchmarks.scipy.cases import Calibration, calibration_suite
from jax_benchmarks.scipy.data import MAX_ITER, START, SensorData
from jax_benchmarks.scipy.fit import Fit
from jax_benchmarks.scipy.settings import ScipySettings

BACKEND = "jax"
Solver = Callable[[jax.Array, jax.Array, jax.Array], jax.scipy.optimize.OptimizeResults]


def calibration_loss(params: jax.Array, sensor_a: jax.Array, sensor_b: jax.Array) -> jax.Array:
    """rmse_with_calibration(slope, offset) = sqrt(mean((A - (B - offset)/slope)^2))."""
    slope, offset = params[0], params[1]
    return jnp.sqrt(jnp.mean((sensor_a - (sensor_b - offset) / slope) ** 2))


Loss = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]


@dataclass(frozen=True)
class CountedLoss:
    """A jitted loss with an empty compilation cache, and how often it was traced per input length.

    JAX keys its compilation cache on the Python function, shared by every `jax.jit` wrapper of it and
    kept for the life of the process; a new function object starts from zero, so the counts are this
    run's. Its body runs only when JAX traces it, once per compilation (once per input shape).
    """

    call: Loss
    traces: Counter[int]


def fresh_jitted_loss() -> CountedLoss:
    traces: Counter[int] = Counter()

    def loss(params: jax.Array, sensor_a: jax.Array, sensor_b: jax.Array) -> jax.Array:
        traces[int(sensor_a.shape[0])] += 1
        return calibration_loss(params, sensor_a, sensor_b)

    return CountedLoss(typed_jit(loss), traces)


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


@dataclass(frozen=True)
class Inputs:
    """The sensors and the start point on the device, float64 (made with x64 on), the whole solve and a
    fresh jitted loss; the sensors' first half is a differently-shaped input for the loss."""

    start: jax.Array
    sensor_a: jax.Array
    sensor_b: jax.Array
    short_a: jax.Array
    short_b: jax.Array
    solve: Solver
    loss: CountedLoss


def compilations(length: int, metric: str, check: str, what: str) -> Callable[[jax.Array, Measurement, Inputs], Judgement]:
    """The judge of a loss case on inputs of `length`: how often the loss compiled for that shape over all
    the case's calls (`metric`), which must be once (`check`)."""

    def judge(_value: jax.Array, timing: Measurement, inputs: Inputs) -> Judgement:
        calls = timing.repeats * timing.calls_per_sample + timing.warmup + 1
        compiles, cached = inputs.loss.traces[length], jit_cache_size(inputs.loss.call)
        return Judgement(
            metrics={"calls": calls, metric: compiles, "jit_cache_entries": cached},
            checks={check: compiles == 1},
            notes=[f"jitted loss (length {length}{what}): {compiles} compilation for {calls} calls; first call "
                   f"{timing.first_call_s or 0.0:.3g} s (trace + compile), then {timing.median_s:.3g} s per cached "
                   f"call; {cached} compiled versions cached"],
        )

    return judge


def suites(settings: ScipySettings) -> list[Suite]:
    def on_device(data: SensorData) -> Inputs:
        device = jax_device(settings.device_kind)
        sensor_a, sensor_b = jax.device_put(data.sensor_a, device), jax.device_put(data.sensor_b, device)
        half = len(data.sensor_a) // 2
        short_a, short_b = sensor_a[:half], sensor_b[:half]
        jax_sync((short_a, short_b))
        return Inputs(start=jax.device_put(np.array(START), device), sensor_a=sensor_a, sensor_b=sensor_b,
                      short_a=short_a, short_b=short_b, solve=make_solver(settings.tol), loss=fresh_jitted_loss())

    def solve(inputs: Inputs) -> Timed[jax.scipy.optimize.OptimizeResults]:
        # The first solve compiles the whole program; measure times it apart from the steady solves.
        return Timed(lambda: inputs.solve(inputs.start, inputs.sensor_a, inputs.sensor_b), jax_sync)

    def loss(inputs: Inputs) -> Timed[jax.Array]:
        return Timed(lambda: inputs.loss.call(inputs.start, inputs.sensor_a, inputs.sensor_b), jax_sync)

    def new_shape_loss(inputs: Inputs) -> Timed[jax.Array]:
        return Timed(lambda: inputs.loss.call(inputs.start, inputs.short_a, inputs.short_b), jax_sync)

    return [calibration_suite(settings, Calibration(
        backend=BACKEND, device=settings.device_kind,
        params={
            "array_length": settings.array_length, "seed": settings.seed, "tol": settings.tol,
            "max_iter": MAX_ITER, "start": list(START), "gradient": "autodiff",
        },
        solver="jax.scipy.optimize.minimize BFGS",
        inputs=on_device,
        solve=solve,
        to_fit=lambda _inputs, result: to_fit(result),
        loss=loss,
        judge_loss=compilations(settings.array_length, "compiles_same_shape", "one_compile_for_same_shape", ""),
        new_shape_loss=new_shape_loss,
        judge_new_shape_loss=compilations(settings.array_length // 2, "recompiles_new_shape",
                                          "new_shape_compiles_again", ", a new shape: compiled again"),
        compiled=True,
        first_solve=" (trace + compile)",
        # float64 throughout, like SciPy and PyTorch: x64 is on while the suite runs (data placement,
        # tracing, every call) and off again however it ends, so it does not leak into other groups.
        context=lambda: jax.enable_x64(True),
    ))]
