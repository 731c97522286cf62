"""The sweep every `jit` backend declares: f applied loop_count times per array length.

A backend says how it runs f (one `SweepVariant` per way: eager, jit, compile) and how it moves a
NumPy array to and from one device (`OnDevice`); `sweep_suite` turns that into one harness `Case`
per (array length, variant), named `f_{length}_float32`. The core (`jax_benchmarks.measure.harness`) times the
whole loop, records the figure and fails the run when a result is off. Every backend gets the same
float32 input, built in NumPy, and is checked against NumPy's float64 f.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray
from rich.markup import escape

from jax_benchmarks.hardware.devices import DeviceKind
from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed
from jax_benchmarks.store.results import Run, Scalar
from jax_benchmarks.measure.timing import Measurement, Sync
from jax_benchmarks.example_function.in_numpy import f as numpy_f
from jax_benchmarks.jit.settings import ARRAY_LENGTHS, SweepSettings

A = TypeVar("A")
F32 = NDArray[np.float32]

DTYPE = "float32"  # JAX's default; every backend computes in it, like for like
# float32 rounding of f (|f| ≤ 4.6 on [0, 4π]) stays near 1e-6; 1e-4 catches a wrong f.
TOLERANCE = 1e-4


def x1() -> F32:
    """The six points f is printed at before anything is timed: linspace(0, 4π, 6)."""
    return np.linspace(0.0, 4 * np.pi, 6, dtype=np.float32)


def sweep_input(length: int) -> F32:
    """The array every backend gets (built in NumPy, then moved to the backend's device)."""
    return np.linspace(0.0, 4 * np.pi, length, dtype=np.float32)


def reference(x: F32) -> NDArray[np.floating]:
    return numpy_f(x.astype(np.float64))


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
class SweepVariant(Generic[A]):
    """One way of running f: `name` is the record's variant (eager, jit, compile).

    `build()` makes the function on first use, once per device (e.g. a fresh `jax.jit`, so its first
    call, the compilation, is timed apart on every device); every array length then shares it.
    """

    name: str
    build: Callable[[], Callable[[A], A]]
    compiled: bool = False  # the first call per length traces and compiles
    # Exceptions meaning "this variant cannot run here" (e.g. torch.compile without a working
    # compiler): the variant is skipped with the reason, never faked.
    cannot_run: tuple[type[Exception], ...] = ()
    # How the compiled program of the built function on an input is obtained, for its memory analysis
    # (`Timed.program`); None: nothing is compiled (eager).
    program: Callable[[Callable[[A], A], A], Callable[[], object]] | None = None


def no_context() -> AbstractContextManager[object]:
    return contextlib.nullcontext()


@dataclass(frozen=True)
class OnDevice(Generic[A]):
    """How a backend moves the NumPy input to one device and back, and how it waits for a result."""

    to_device: Callable[[F32], A]
    to_numpy: Callable[[A], NDArray[np.floating]]
    sync: Sync
    # Entered around each timed loop (PyTorch: inference mode, so no autograd bookkeeping is timed).
    context: Callable[[], AbstractContextManager[object]] = no_context


@dataclass
class X1Agreement:
    """f(x1) per implementation, printed and checked before anything is timed.

    `check(run)` is a suite's `before`; its largest difference to NumPy float64 then goes into every
    record of the backend as `x1_max_abs_err` (also on the devices after the first, checked once).
    """

    rows: Callable[[], dict[str, NDArray[np.floating]]]
    worst: float | None = None

    def check(self, run: Run) -> None:
        self.worst = check_x1(run, self.rows())


def log_skipped_lengths(run: Run, backend: str, settings: SweepSettings) -> None:
    for reason in sweep_points(settings.items)[1]:
        run.log(f"{backend}: skipped: {reason}")


def sweep_suite(
    backend: str, device: DeviceKind, settings: SweepSettings, on_device: Callable[[], OnDevice[A]],
    variants: Sequence[SweepVariant[A]], x1_agreement: X1Agreement,
    before: Callable[[Run], None] | None = None, params: Mapping[str, int | str] | None = None,
) -> Suite:
    """One backend on one device: a case per (array length, variant), lengths in order.

    Nothing is built here: `on_device()` (e.g. finding the JAX device) and each variant's function
    are made on first use, in a case's untimed `prepare`, and kept for the other lengths.
    """
    place = functools.cache(on_device)
    built = {variant.name: functools.cache(variant.build) for variant in variants}
    cases: list[Case[A]] = []
    for point in sweep_points(settings.items)[0]:
        for variant in variants:
            cases.append(Case(
                point.case,
                prepare=functools.partial(prepare_loop, place, built[variant.name], point, variant.program),
                judge=functools.partial(judge_loop, place, point, x1_agreement),
                variant=variant.name, dtype=DTYPE,
                params={"array_length": point.array_length, "loop_count": point.loop_count,
                        "total_items": point.items, **(params or {})},
                compiled=variant.compiled, cannot_run=variant.cannot_run, speedup_over="eager",
            ))
    return Suite(Target(backend, device), cases, before=before)


def prepare_loop(place: Callable[[], OnDevice[A]], fn: Callable[[], Callable[[A], A]], point: SweepPoint,
                 program: Callable[[Callable[[A], A], A], Callable[[], object]] | None = None) -> Timed[A]:
    """Untimed: the input on the device; timed: the whole loop of loop_count calls."""
    on_device = place()
    x = on_device.to_device(sweep_input(point.array_length))
    f = fn()

    def loop() -> A:
        with on_device.context():
            return call_repeatedly(f, x, point.loop_count)

    return Timed(loop, on_device.sync, program=None if program is None else program(f, x))


def judge_loop(place: Callable[[], OnDevice[A]], point: SweepPoint, x1_agreement: X1Agreement,
               result: A, measurement: Measurement) -> Judgement:
    """items/s, and the loop's last result against NumPy float64 (a failure once recorded)."""
    expected = reference(sweep_input(point.array_length))
    error = float(np.max(np.abs(place().to_numpy(result) - expected)))
    checks: dict[str, Scalar] = {"max_abs_err_vs_numpy_float64": error}
    if x1_agreement.worst is not None:
        checks["x1_max_abs_err"] = x1_agreement.worst
    failures = [] if error <= TOLERANCE else [f"max |f(x) - reference| = {error:.3g} > {TOLERANCE:g}"]
    return Judgement(checks=checks, metrics={"items_per_s": point.items / measurement.median_s},
                     failures=failures)


def format_row(label: str, values: NDArray[np.floating]) -> str:
    return f"  {label:<17} [" + " ".join(f"{v:7.4f}" for v in values) + "]"


def check_x1(run: Run, rows: dict[str, NDArray[np.floating]]) -> float:
    """Print f(x1) per implementation; fail unless they all agree.

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

