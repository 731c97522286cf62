"""The cases every autograd backend declares, written once on the core harness (src/jax_benchmarks/measure/harness.py).

A backend describes one device as `Arrays` (how the points move into its arrays and back, and its
sync), its f, and one gradient function per variant (e.g. vmap, vmap+jit); `gradient_suite` turns
that into a `Suite` with one `Case` per variant, all named `grad_{N}_{dtype}`. The core times f′ over
the N points (first call apart, warm-up, sync); each case's judgement then computes f′ at x1 and x2
(untimed), checks every value against the closed form, prints f and f′ (once per suite: the first
judged case), and hands the values on as its output (`Judgement.output` -> `run.outputs`), which the
cross-backend parity check of `autograd all` reads (src/jax_benchmarks/autograd/parity.py).

Building a suite computes nothing: the points, the device and the arrays on it are made on first use
by `SuiteInputs`, shared by the suite's cases.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from jax_benchmarks.autograd.reference import (
    EXPECTED_DF_X1,
    EXPECTED_F_X1,
    TOLERANCE,
    X1,
    X2_COUNT,
    F64,
    Evaluation,
    Floats,
    Points,
    case_name,
    format_row,
)
from jax_benchmarks.autograd.settings import AutogradSettings
from jax_benchmarks.hardware.devices import DeviceKind
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed
from jax_benchmarks.run import Run
from jax_benchmarks.measure.timing import Measurement, Sync

A = TypeVar("A")  # the backend's array type (jax.Array, torch.Tensor, NumPy array)


@dataclass(frozen=True)
class Arrays(Generic[A]):
    """A backend's arrays on one device: NumPy in (the transfer is never timed), NumPy out, and the sync."""

    to_native: Callable[[Floats], A]
    to_numpy: Callable[[A], Floats]
    sync: Sync


class SuiteInputs(Generic[A]):
    """What the cases of one suite share, made on first use (untimed): the points, the arrays on the
    device, f at the printed points, and whether the values were printed yet."""

    def __init__(self, settings: AutogradSettings, arrays: Callable[[], Arrays[A]], value: Callable[[A], A]) -> None:
        self.dtype = settings.dtype
        self.count = settings.points
        self._arrays = arrays  # finds the device (JAX / PyTorch) only when a case runs
        self._value = value
        self.printed = False

    @functools.cached_property
    def arrays(self) -> Arrays[A]:
        return self._arrays()

    @functools.cached_property
    def points(self) -> Points:
        return Points.make(self.dtype, self.count)

    @functools.cached_property
    def timed(self) -> A:
        return self.arrays.to_native(self.points.timed)

    @functools.cached_property
    def f_shown(self) -> F64:
        """f at [x1, *x2]: the same for every variant, computed once per suite."""
        return self.as_f64(self._value(self.arrays.to_native(self.points.shown)))

    def as_f64(self, values: A) -> F64:
        return np.asarray(self.arrays.to_numpy(values), dtype=np.float64)


@dataclass(frozen=True)
class GradientCase(Generic[A]):
    """One variant's case: time `grad` over the N points, then judge what it computed."""

    inputs: SuiteInputs[A]
    backend: str
    device: DeviceKind
    grad: Callable[[A], A]  # f′ at every point of a 1-D array

    def prepare(self) -> Timed[A]:
        timed = self.inputs.timed
        return Timed(lambda: self.grad(timed), self.inputs.arrays.sync)

    def judge(self, df_timed: A, measurement: Measurement) -> Judgement:
        inputs = self.inputs
        points = inputs.points
        values = Evaluation(
            points, inputs.f_shown, inputs.as_f64(self.grad(inputs.arrays.to_native(points.shown))),
            inputs.as_f64(df_timed),
        )
        tolerance = TOLERANCE[points.dtype]
        failures = []
        if values.error_f > tolerance or values.error_df > tolerance:
            failures.append(f"max |error| f {values.error_f:.3g}, f′ {values.error_df:.3g} > {tolerance:g}")
        notes = [] if inputs.printed else [values_text(self.backend, self.device, values)]
        inputs.printed = True
        return Judgement(
            checks={
                "f_x1": float(values.f_shown[0]),
                "df_x1": float(values.df_shown[0]),
                "max_abs_err_f": values.error_f,
                "max_abs_err_df": values.error_df,
            },
            metrics={"points_per_s": points.timed.size / measurement.median_s},
            failures=failures,
            notes=notes,
            output=values,
        )


def gradient_suite(
    backend: str, device: DeviceKind, settings: AutogradSettings, *, arrays: Callable[[], Arrays[A]],
    value: Callable[[A], A], gradients: Sequence[tuple[str, Callable[[A], A]]], compiled: Sequence[str] = (),
    after: Callable[[Run], None] | None = None, context: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> Suite:
    """One backend on one device: a case per (variant, gradient function), in order; the variants named
    in `compiled` compile on their first call, whose extra cost is recorded as compile_s."""
    inputs = SuiteInputs(settings, arrays, value)
    name = case_name(settings.dtype, settings.points)
    params = {"points": settings.points, "x": "linspace(0, 10π, N)"}
    cases = []
    for variant, grad in gradients:
        case = GradientCase(inputs, backend, device, grad)
        cases.append(Case(name, case.prepare, case.judge, variant=variant, dtype=settings.dtype, params=params,
                          compiled=variant in compiled))
    return Suite(Target(backend, device), cases, after=after, context=context)


def values_text(backend: str, device: str, values: Evaluation) -> str:
    """f and f′ at x1 = 3.0 and at x2 = linspace(0, 4π, 20), next to the expected f(3.0), f′(3.0)."""
    f, df = values.f_shown, values.df_shown
    return (
        f"[bold]{backend}[/] @{device} ({values.points.dtype})\n"
        f"  f({X1}) = {f[0]:.7f}   f′({X1}) = {df[0]:.7f}   (expected: {EXPECTED_F_X1}, {EXPECTED_DF_X1})\n"
        f"  x2 = linspace(0, 4π, {X2_COUNT})\n"
        f"  f(x2)  = {format_row(f[1:])}\n"
        f"  f′(x2) = {format_row(df[1:])}"
    )

