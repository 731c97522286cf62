"""The sweep every `jit` backend runs: f applied loop_count times per array length.

A backend supplies its f in one or more variants (eager, jit, compile) and
how to move a NumPy array to and from its device; this module builds the
same float32 input for everyone, times the whole loop through
`src.core.timing.measure` and records one figure per (length, variant).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray
from rich.markup import escape

from src.core.devices import DeviceKind
from src.core.errors import CheckFailed
from src.core.results import Run, Scalar
from src.core.timing import Measurement, Sync, measure
from src.jit.settings import ARRAY_LENGTHS, SweepSettings

A = TypeVar("A")
F32 = NDArray[np.float32]

DTYPE = "float32"  # JAX's default; every backend computes in it, like for like
# float32 rounding of f (|f| ≤ 4.6 on [0, 4π]) stays near 1e-6; 1e-4 catches a wrong f.
TOLERANCE = 1e-4


def f(x: NDArray[np.floating]) -> NDArray[np.floating]:
    """The NumPy f: the baseline and the float64 reference the other backends are checked against."""
    y: NDArray[np.floating] = 0.2 * x + np.sin(x) + np.cos(2 * x)
    return y


def x1() -> F32:
    """The seed's probe: linspace(0, 4π, 6)."""
    return np.linspace(0.0, 4 * np.pi, 6, dtype=np.float32)


def sweep_input(length: int) -> F32:
    """The array every backend gets (built in NumPy, then moved to the backend's device)."""
    return np.linspace(0.0, 4 * np.pi, length, dtype=np.float32)


def reference(x: F32) -> NDArray[np.floating]:
    return f(x.astype(np.float64))


@dataclass(frozen=True)
class SweepPoint:
    array_length: int
    loop_count: int

    @property
    def items(self) -> int:
        return self.array_length * self.loop_count

    @property
    def case(self) -> str:
        return f"f_{self.array_length}_{DTYPE}"


def sweep_points(total_items: int) -> tuple[list[SweepPoint], list[str]]:
    """The lengths that fit in `total_items`, and why the others are skipped."""
    points, skipped = [], []
    for length in ARRAY_LENGTHS:
        if length > total_items:
            skipped.append(f"array_length {length:,} > --total-items {total_items:,}")
        else:
            points.append(SweepPoint(length, total_items // length))
    return points, skipped


def call_repeatedly(fn: Callable[[A], A], x: A, count: int) -> A:
    """The timed loop: `count` calls of fn on the same input; returns the last result.

    Syncing the last result waits for all of them: a device runs the
    computations dispatched to it in order (checked in tests/jit).
    """
    y = x
    for _ in range(count):
        y = fn(x)
    return y


@dataclass(frozen=True)
class Variant(Generic[A]):
    """One way of running f: `name` is the record's variant (eager, jit, compile)."""

    name: str
    fn: Callable[[A], A]
    compiled: bool = False
    # Exceptions meaning "this variant cannot run here" (e.g. torch.compile without
    # a working compiler): the variant is skipped with the reason, never faked.
    cannot_run: tuple[type[Exception], ...] = ()


@dataclass
class SweepTarget(Generic[A]):
    """A backend on one device: how to move data there and back, and how to wait for it."""

    backend: str
    device: DeviceKind
    to_device: Callable[[F32], A]
    to_numpy: Callable[[A], NDArray[np.floating]]
    sync: Sync
    variants: Sequence[Variant[A]]
    checks: dict[str, float] = field(default_factory=dict)
    params: dict[str, int | str] = field(default_factory=dict)  # e.g. the thread count


def log_skipped_lengths(run: Run, backend: str, settings: SweepSettings) -> None:
    for reason in sweep_points(settings.items)[1]:
        run.log(f"{backend}: skipped: {reason}")


def run_sweep(run: Run, settings: SweepSettings, target: SweepTarget[A]) -> None:
    """Time every variant at every length; record each figure, then check its result."""
    points, _ = sweep_points(settings.items)
    dead: dict[str, str] = {}  # variant -> why it cannot run on this device
    for point in points:
        x_host = sweep_input(point.array_length)
        x = target.to_device(x_host)
        expected = reference(x_host)
        eager_median: float | None = None
        for variant in target.variants:
            label = f"{target.backend} {variant.name} @{target.device}, length {point.array_length:,}"
            if variant.name in dead:
                run.log(f"skipped: {escape(label)}: {escape(dead[variant.name])}")
                continue
            try:
                m = time_loop(variant, x, point, target.sync, settings.repeats)
            except variant.cannot_run as exc:
                dead[variant.name] = f"{type(exc).__name__}: {first_line(exc)}"
                run.log(f"skipped: {escape(label)}: {escape(dead[variant.name])}")
                continue
            if variant.name == "eager":
                eager_median = m.median_s
            error = float(np.max(np.abs(target.to_numpy(variant.fn(x)) - expected)))
            record_figure(run, target, variant.name, point, m, error, eager_median, variant.compiled)
            if not error <= TOLERANCE:
                raise CheckFailed(f"{label}: max |f(x) - reference| = {error:.3g} > {TOLERANCE:g}")


def record_figure(run: Run, target: SweepTarget[A], variant: str, point: SweepPoint, m: Measurement,
                  error: float, eager_median: float | None, compiled: bool) -> None:
    metrics: dict[str, Scalar] = {"items_per_s": point.items / m.median_s}
    if variant != "eager" and eager_median is not None:
        metrics["speedup"] = eager_median / m.median_s
    run.record(
        backend=target.backend, variant=variant, case=point.case, device=target.device,
        measurement=m, dtype=DTYPE,
        params={"array_length": point.array_length, "loop_count": point.loop_count,
                "total_items": point.items, **target.params},
        compile_s=m.compile_s if compiled else None,
        metrics=metrics,
        checks={"max_abs_err_vs_numpy_float64": error, **target.checks},
    )


def time_loop(variant: Variant[A], x: A, point: SweepPoint, sync: Sync, repeats: int) -> Measurement:
    """One figure = the whole loop of loop_count calls; the first loop (compile) is timed apart."""
    return measure(lambda: call_repeatedly(variant.fn, x, point.loop_count), sync, repeats=repeats)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def format_row(label: str, values: NDArray[np.floating]) -> str:
    return f"  {label:<17} [" + " ".join(f"{v:7.4f}" for v in values) + "]"


def check_x1(run: Run, rows: dict[str, NDArray[np.floating]]) -> float:
    """Print f(x1) per implementation, as the seed does; fail unless they all agree.

    Returns the largest difference to the float64 NumPy reference. Nothing has
    been measured yet, so raising here loses no figure.
    """
    probe = x1()
    expected = reference(probe)
    run.log(escape(format_row("x1", probe)))
    worst = 0.0
    for label, values in rows.items():
        run.log(escape(format_row(label, np.asarray(values))))
        worst = max(worst, float(np.max(np.abs(np.asarray(values, dtype=np.float64) - expected))))
    if not (math.isfinite(worst) and worst <= TOLERANCE):
        raise CheckFailed(f"f(x1) implementations disagree: max |Δ| = {worst:.3g} > {TOLERANCE:g}")
    run.log(f"  agree with NumPy float64: max |Δ| = {worst:.2g} (tolerance {TOLERANCE:g})")
    return worst
