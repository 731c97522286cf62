"""The cases every autograd backend declares, written once on the core harness (jax_benchmarks.measure.harness).

A backend gives its arrays on one device (`jax_benchmarks.frameworks.arrays`), its f, and one gradient
function per variant (e.g. vmap, vmap+jit); `gradient_suite` turns that into a `Suite` with one `Case`
per variant, all named `grad_{N}_{dtype}`. The core times f′ over the N points (first call apart,
warm-up, sync); each case's judgement then computes f′ at x1 and x2 (untimed), checks every value
against the closed form, logs f and f′ there, and hands the values on as its output (a `Computed`),
which the cross-backend agreement of `autograd all` compares (jax_benchmarks.measure.agreement).

Building a suite computes nothing: the points, the timed points on the device and f at the shown
points are the suite's fixtures, made on first use and shared by its cases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

import numpy as np

from jax_benchmarks.autograd.reference import (
    EXPECTED_DF_X1,
    EXPECTED_F_X1,
    TOLERANCE,
    X1,
    X2_COUNT,
    F64,
    Evaluation,
    Points,
    case_name,
    format_row,
)
from jax_benchmarks.autograd.settings import AutogradSettings
from jax_benchmarks.frameworks.arrays import DeviceArrays
from jax_benchmarks.measure.agreement import Agreement, Computed, computed, record_agreement
from jax_benchmarks.measure.harness import Case, Fixture, Judgement, Suite, Target, Timed
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.run import Run

A = TypeVar("A")  # the backend's array type (jax.Array, torch.Tensor, NumPy array)
AGREEMENT = "autograd f and f′"  # the kind of values `autograd all` compares across backends


def as_f64(arrays: DeviceArrays[A], values: A) -> F64:
    return np.asarray(arrays.to_numpy(values), dtype=np.float64)


def gradient_suite(
    backend: str, arrays: DeviceArrays[A], settings: AutogradSettings, *, value: Callable[[A], A],
    gradients: Sequence[tuple[str, Callable[[A], A]]], compiled: Sequence[str] = (),
    after: Callable[[Run], None] | None = None, context: Callable[[], AbstractContextManager[object]] = nullcontext,
    cannot_run: tuple[type[Exception], ...] = (),
) -> Suite:
    """One backend on one device: a case per (variant, gradient function), in order; the variants named
    in `compiled` compile on their first call, whose extra cost is recorded as compile_s, and are skipped with
    the reason where their compiler raises one of `cannot_run`."""
    points: Fixture[Points] = Fixture("points", lambda: Points.make(settings.dtype, settings.points))
    timed: Fixture[A] = Fixture("timed points on the device", lambda p: arrays.to_device(p.timed), needs=(points,))
    f_shown: Fixture[F64] = Fixture(
        "f at [x1, *x2]", lambda p: as_f64(arrays, value(arrays.to_device(p.shown))), needs=(points,))
    name = case_name(settings.dtype, settings.points)
    params = {"points": settings.points, "x": "linspace(0, 10π, N)"}

    def case(variant: str, grad: Callable[[A], A]) -> Case[Any]:
        def prepare(_points: Points, x: A, _f: F64) -> Timed[A]:
            return Timed(lambda: grad(x), arrays.sync)

        def judge(df_timed: A, measurement: Measurement, at: Points, _x: A, f_values: F64) -> Judgement:
            df_shown = as_f64(arrays, grad(arrays.to_device(at.shown)))
            return judge_gradient(f"{backend} {variant} @{arrays.kind}",
                                  Evaluation(at, f_values, df_shown, as_f64(arrays, df_timed)), measurement)

        return Case(name, prepare, judge, variant=variant, dtype=settings.dtype, params=params,
                    compiled=variant in compiled, cannot_run=cannot_run if variant in compiled else (),
                    uses=(points, timed, f_shown))

    return Suite(Target(backend, arrays.kind), [case(variant, grad) for variant, grad in gradients],
                 after=after, context=context, fixtures=[points, timed, f_shown])


def judge_gradient(label: str, values: Evaluation, measurement: Measurement) -> Judgement:
    """f and f′ against the closed forms; the values are logged and handed on for the agreement."""
    tolerance = TOLERANCE[values.points.dtype]
    failures = []
    if values.error_f > tolerance or values.error_df > tolerance:
        failures.append(f"max |error| f {values.error_f:.3g}, f′ {values.error_df:.3g} > {tolerance:g}")
    return Judgement(
        checks={
            "f_x1": float(values.f_shown[0]),
            "df_x1": float(values.df_shown[0]),
            "max_abs_err_f": values.error_f,
            "max_abs_err_df": values.error_df,
        },
        metrics={"points_per_s": values.points.timed.size / measurement.median_s},
        failures=failures,
        notes=[values_text(label, values)],
        output=Computed(AGREEMENT, {"f": values.f_shown, "df": values.df_all}),
    )


def values_text(label: str, values: Evaluation) -> str:
    """f and f′ at x1 = 3.0 and at x2 = linspace(0, 4π, 20), next to the expected f(3.0), f′(3.0)."""
    f, df = values.f_shown, values.df_shown
    return (
        f"[bold]{label}[/] ({values.points.dtype})\n"
        f"  f({X1}) = {f[0]:.7f}   f′({X1}) = {df[0]:.7f}   (expected: {EXPECTED_F_X1}, {EXPECTED_DF_X1})\n"
        f"  x2 = linspace(0, 4π, {X2_COUNT})\n"
        f"  f(x2)  = {format_row(f[1:])}\n"
        f"  f′(x2) = {format_row(df[1:])}"
    )


def record_gradient_agreement(run: Run) -> Agreement | None:
    """`autograd all`: f and f′ of every case that ran, compared across backends (absolute differences,
    the dtype's tolerance); recorded as `agreement_grad_{N}_{dtype}`, failing the run when apart."""
    kept = computed(run, AGREEMENT)
    if not kept:
        return None
    record, values = kept[0]
    tolerance = next(t for dtype, t in TOLERANCE.items() if dtype == record.dtype)
    return record_agreement(run, AGREEMENT, tolerance=tolerance, difference="abs",
                            params={"points": int(np.size(values["df"]))})
