"""`scipy jax`: jax.scipy.optimize.minimize (BFGS) on the jitted loss.

Everything runs in float64 (`jax.enable_x64` as a context manager, so the
setting does not leak into other groups run in the same process) to compare
like for like with SciPy and PyTorch.

Note: jax.scipy.optimize.minimize accepts `tol` but ignores it (jax 0.10.2
passes only `options` to its BFGS, whose gtol defaults to 1e-5), so the
tolerance is given as `options={"gtol": ...}`.

The loss shows what jit costs and saves: the first call traces and compiles,
later calls reuse the compiled code, and an input of a different shape
compiles again - counted with the jitted function's cache size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import jax.scipy.optimize
import numpy as np

from jax_benchmarks.hardware.devices import jax_device
from jax_benchmarks.measure.harness import Judgement, Suite, Timed
from jax_benchmarks.measure.timing import Measurement, jax_sync, time_call
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


@dataclass(frozen=True)
class Inputs:
    """The sensors and the start point on the device, float64 (made with x64 on)."""

    start: jax.Array
    sensor_a: jax.Array
    sensor_b: jax.Array
    solve: Solver


Loss = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]


class LossCompilations:
    """The loss_eval case: a fresh jitted loss timed on the full data (compile apart), then how often it
    compiled for that shape and for a differently-shaped input (untimed by `measure`, timed once each)."""

    def __init__(self) -> None:
        self.loss: Loss | None = None
        self.before = 0

    def prepare(self, inputs: Inputs) -> Timed[jax.Array]:
        loss = self.loss = fresh_jitted_loss()
        self.before = jit_cache_size(loss)
        return Timed(lambda: loss(inputs.start, inputs.sensor_a, inputs.sensor_b), jax_sync)

    def judge(self, inputs: Inputs, _value: jax.Array, timing: Measurement) -> Judgement:
        loss = self.loss
        assert loss is not None, "prepare() runs first"
        after_same_shape = jit_cache_size(loss)
        # A differently-shaped input (half the samples) cannot reuse the compiled code.
        half = int(inputs.sensor_a.shape[0]) // 2
        short_a, short_b = inputs.sensor_a[:half], inputs.sensor_b[:half]
        jax_sync((short_a, short_b))
        _, new_shape_first_s = time_call(lambda: loss(inputs.start, short_a, short_b), jax_sync)
        after_new_shape = jit_cache_size(loss)
        _, new_shape_again_s = time_call(lambda: loss(inputs.start, short_a, short_b), jax_sync)
        after_repeat = jit_cache_size(loss)

        calls = timing.repeats * timing.calls_per_sample + timing.warmup + 1
        compiles_same_shape = after_same_shape - self.before
        recompiles_new_shape = after_new_shape - after_same_shape
        return Judgement(
            metrics={
                "calls": calls,
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
            notes=[
                f"jitted loss: first call {timing.first_call_s or 0.0:.3g} s (trace + compile), then "
                f"{timing.median_s:.3g} s per cached call; {compiles_same_shape} compilation for "
                f"{calls} same-shape calls. A length-{half} input "
                f"compiled again ({recompiles_new_shape} new compilation, first call {new_shape_first_s:.3g} s, "
                f"next {new_shape_again_s:.3g} s): {after_repeat} compiled versions cached"
            ],
        )


def suites(settings: ScipySettings) -> list[Suite]:
    def on_device(data: SensorData) -> Inputs:
        device = jax_device(settings.device_kind)
        return Inputs(
            start=jax.device_put(np.array(START), device),
            sensor_a=jax.device_put(data.sensor_a, device),
            sensor_b=jax.device_put(data.sensor_b, device),
            solve=make_solver(settings.tol),
        )

    def solve(inputs: Inputs) -> Timed[jax.scipy.optimize.OptimizeResults]:
        # The first solve compiles the whole program; measure times it apart from the steady solves.
        return Timed(lambda: inputs.solve(inputs.start, inputs.sensor_a, inputs.sensor_b), jax_sync)

    compilations = LossCompilations()
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
        loss=compilations.prepare,
        judge_loss=compilations.judge,
        compiled=True,
        first_solve=" (trace + compile)",
        # float64 throughout, like SciPy and PyTorch: x64 is on while the suite runs (data placement,
        # tracing, every call) and off again however it ends, so it does not leak into other groups.
        context=lambda: jax.enable_x64(True),
    ))]
