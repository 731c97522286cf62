"""What every autograd backend does, written once: show f and f′, time the gradient, check, record.

A backend describes itself per device as a `Target`: how to move the points
in and out, f, and its gradient variants (e.g. vmap, vmap+jit). `run_target`
then, for each variant: times f′ over the N points through the core's
`measure` (first call apart, warm-up, sync), computes f′ at x1, x2 and the N
points, checks them against the closed form, records, and publishes them for
the cross-backend parity check of `autograd all`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from src.autograd.parity import BOOK, Evaluation
from src.autograd.reference import (
    SEED_DF_X1,
    SEED_F_X1,
    TOLERANCE,
    X1,
    X2_COUNT,
    F64,
    Floats,
    Points,
    df_exact,
    f_exact,
    format_row,
    max_abs_diff,
)
from src.autograd.settings import AutogradSettings
from src.core.devices import DeviceKind
from src.core.errors import CheckFailed
from src.core.results import Run
from src.core.timing import Measurement, Sync, measure

A = TypeVar("A")  # the backend's array type (jax.Array, torch.Tensor, NumPy array)


@dataclass(frozen=True)
class Variant(Generic[A]):
    name: str
    grad: Callable[[A], A]  # f′ at every point of a 1-D array
    compiled: bool = False  # report the first call's extra cost as compile time


@dataclass(frozen=True)
class Target(Generic[A]):
    backend: str
    device: DeviceKind
    value: Callable[[A], A]  # f at every point
    variants: tuple[Variant[A], ...]
    to_native: Callable[[Floats], A]
    to_numpy: Callable[[A], Floats]
    sync: Sync


@dataclass(frozen=True)
class Outcome:
    """What one variant computed, in float64, and its errors against the closed form."""

    points: Points
    f_shown: F64  # f at [x1, *x2] (computed once per target)
    df_shown: F64  # f′ at [x1, *x2]
    df_timed: F64  # f′ at the timed points

    @property
    def df_all(self) -> F64:
        return np.concatenate([self.df_shown, self.df_timed])

    @property
    def error_f(self) -> float:
        return max_abs_diff(self.f_shown, f_exact(self.points.shown))

    @property
    def error_df(self) -> float:
        return max_abs_diff(self.df_all, df_exact(np.concatenate([self.points.shown, self.points.timed])))


def run_target(run: Run, settings: AutogradSettings, target: Target[A]) -> None:
    points = Points.make(settings.dtype, settings.points)
    f_shown = as_f64(target.to_numpy(target.value(target.to_native(points.shown))))
    failures: list[str] = []
    for index, variant in enumerate(target.variants):
        measurement, outcome = time_and_evaluate(target, variant, points, f_shown, settings.repeats)
        if index == 0:
            run.log(values_text(target, outcome))
        failure = record_outcome(run, target, variant, measurement, outcome)
        if failure:
            failures.append(failure)
    if failures:
        raise CheckFailed("; ".join(failures))


def time_and_evaluate(
    target: Target[A], variant: Variant[A], points: Points, f_shown: F64, repeats: int
) -> tuple[Measurement, Outcome]:
    """Time f′ over the timed points (first call apart, synced), then collect its values."""
    timed = target.to_native(points.timed)  # the transfer to the device is not timed
    measurement = measure(lambda: variant.grad(timed), target.sync, repeats=repeats)
    df_shown = as_f64(target.to_numpy(variant.grad(target.to_native(points.shown))))
    df_timed = as_f64(target.to_numpy(variant.grad(timed)))
    return measurement, Outcome(points, f_shown, df_shown, df_timed)


def record_outcome(
    run: Run, target: Target[A], variant: Variant[A], measurement: Measurement, outcome: Outcome
) -> str | None:
    """Record the figure and its checks, publish the values for parity; return the failure, if any."""
    points = outcome.points
    run.record(
        backend=target.backend,
        variant=variant.name,
        case=points.case,
        device=target.device,
        dtype=points.dtype,
        measurement=measurement,
        compile_s=measurement.compile_s if variant.compiled else None,
        params={"points": points.timed.size, "x": "linspace(0, 10π, N)"},
        metrics={"points_per_s": points.timed.size / measurement.median_s},
        checks={
            "f_x1": float(outcome.f_shown[0]),
            "df_x1": float(outcome.df_shown[0]),
            "max_abs_err_f": outcome.error_f,
            "max_abs_err_df": outcome.error_df,
        },
    )
    label = f"{target.backend} {variant.name} @{target.device}"
    BOOK.add(run.run_id, Evaluation(target.backend, label, target.device, points, outcome.f_shown, outcome.df_all))
    tolerance = TOLERANCE[points.dtype]
    if outcome.error_f > tolerance or outcome.error_df > tolerance:
        return f"{label}: max |error| f {outcome.error_f:.3g}, f′ {outcome.error_df:.3g} > {tolerance:g}"
    return None


def as_f64(values: Floats) -> F64:
    return np.asarray(values, dtype=np.float64)


def values_text(target: Target[A], outcome: Outcome) -> str:
    """The seed's printout: f and f′ at x1 = 3.0 and at x2 = linspace(0, 4π, 20)."""
    f, df = outcome.f_shown, outcome.df_shown
    return (
        f"[bold]{target.backend}[/] @{target.device} ({outcome.points.dtype})\n"
        f"  f({X1}) = {f[0]:.7f}   f′({X1}) = {df[0]:.7f}   (seed: {SEED_F_X1}, {SEED_DF_X1})\n"
        f"  x2 = linspace(0, 4π, {X2_COUNT})\n"
        f"  f(x2)  = {format_row(f[1:])}\n"
        f"  f′(x2) = {format_row(df[1:])}"
    )
