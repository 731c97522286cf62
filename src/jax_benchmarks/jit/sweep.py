"""The sweep every `jit` backend declares: f applied loop_count times per array length.

A backend says how it runs f (one `SweepVariant` per way: eager, jit, compile) and gives its arrays on
one device (`jax_benchmarks.frameworks.arrays`); `sweep_suite` turns that into one harness `Case`
per (array length, variant), named `f_{length}_float32`. The core (`jax_benchmarks.measure.harness`) times the
whole loop, records the figure and fails the run when a result is off. Every backend gets the same
float32 input, built in NumPy, and is checked against NumPy's float64 f.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray
from rich.markup import escape

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.frameworks.arrays import DeviceArrays, Floats
from jax_benchmarks.measure.agreement import Agreement, compare
from jax_benchmarks.measure.harness import Case, Fixture, Judgement, Recorder, Suite, Target, Timed
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.example_function.in_numpy import f as numpy_f
from jax_benchmarks.jit.settings import ARRAY_LENGTHS, SweepSettings

A = TypeVar("A")
F32 = NDArray[np.float32]

DTYPE = "float32"  # JAX's default; every backend computes in it, like for like
# float32 rounding of f (|f| ≤ 4.6 on [0, 4π]) stays near 1e-6; 1e-4 catches a wrong f.
TOLERANCE = 1e-4
REFERENCE = "NumPy float64"


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
    computations dispatched to it in order (tests/jit/test_sweep.py checks it for JAX).
    """
    y = x
    for _ in range(count):
        y = fn(x)
    return y


@dataclass(frozen=True)
class SweepVariant(Generic[A]):
    """One way of running f: `name` is the record's variant (eager, jit, compile).

    `build()` makes the function on first use, once per device suite (e.g. a fresh `jax.jit`, so its
    first call, the compilation, is timed apart on every device); every array length then shares it.
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


class X1Check:
    """f(x1) per implementation of a backend against NumPy float64, computed once on first use: a suite's
    `before` prints and checks it before anything is timed, and every record of the backend (on every
    device) carries its largest difference as `x1_max_abs_err`."""

    def __init__(self, rows: Callable[[], Mapping[str, Floats]]) -> None:
        self.rows = rows

    @functools.cached_property
    def computed(self) -> dict[str, Floats]:
        return {label: np.asarray(values) for label, values in self.rows().items()}

    @functools.cached_property
    def agreement(self) -> Agreement:
        implementations = {REFERENCE: reference(x1()), **self.computed}
        return compare({label: {"f(x1)": values} for label, values in implementations.items()}, TOLERANCE, "abs",
                       reference=REFERENCE)

    def check(self, run: Recorder) -> None:
        """Print f(x1) per implementation; fail unless each agrees with NumPy float64. Nothing has been
        measured yet, so failing here loses no figure."""
        run.log(escape(format_row("x1", x1())))
        for label, values in self.computed.items():
            run.log(escape(format_row(label, values)))
        worst = self.agreement.largest
        if not self.agreement.passed:
            raise CheckFailed(f"f(x1) implementations disagree: max |Δ| = {worst:.3g} > {TOLERANCE:g}")
        run.log(f"  agree with NumPy float64: max |Δ| = {worst:.2g} (tolerance {TOLERANCE:g})")


def log_skipped_lengths(run: Recorder, backend: str, settings: SweepSettings) -> None:
    for reason in sweep_points(settings.items)[1]:
        run.log(f"{backend}: skipped: {reason}")


def sweep_suite(
    backend: str, arrays: DeviceArrays[A], settings: SweepSettings, variants: Sequence[SweepVariant[A]],
    x1_check: X1Check, *, before: Callable[[Recorder], None] | None = None,
    params: Mapping[str, int | str] | None = None,
    call_context: Callable[[], AbstractContextManager[object]] = nullcontext,
) -> Suite:
    """One backend on one device: a case per (array length, variant), lengths in order.

    Nothing is built here: the device, each length's input on it and each variant's function are the
    suite's fixtures, made on first use in a case's untimed prepare and shared by the cases that use
    them. `call_context` is entered around each timed loop (PyTorch: inference mode, so no autograd
    bookkeeping is timed).
    """
    functions = {v.name: Fixture(f"{v.name} f", v.build) for v in variants}
    agreement = Fixture("f(x1) agreement", lambda: x1_check.agreement)
    points = sweep_points(settings.items)[0]
    inputs = {p.array_length: Fixture(f"x of length {p.array_length}", functools.partial(on_device, arrays, p))
              for p in points}
    cases: list[Case[A]] = []
    for point in points:
        for variant in variants:
            cases.append(Case(
                point.case,
                prepare=functools.partial(prepare_loop, arrays, point, call_context, variant.program),
                judge=functools.partial(judge_loop, arrays, point),
                variant=variant.name, dtype=DTYPE,
                params={"array_length": point.array_length, "loop_count": point.loop_count,
                        "total_items": point.items, **(params or {})},
                compiled=variant.compiled, cannot_run=variant.cannot_run, speedup_over="eager",
                uses=(functions[variant.name], inputs[point.array_length], agreement),
            ))
    return Suite(Target(backend, arrays.kind), cases, before=before,
                 fixtures=[*functions.values(), *inputs.values(), agreement])


def on_device(arrays: DeviceArrays[A], point: SweepPoint) -> A:
    x = arrays.to_device(sweep_input(point.array_length))
    arrays.sync(x)  # made untimed: the timed loop must not wait for the transfer
    return x


def prepare_loop(arrays: DeviceArrays[A], point: SweepPoint,
                 call_context: Callable[[], AbstractContextManager[object]],
                 program: Callable[[Callable[[A], A], A], Callable[[], object]] | None,
                 f: Callable[[A], A], x: A, _agreement: Agreement) -> Timed[A]:
    """Timed: the whole loop of loop_count calls of f on the input already on the device."""

    def loop() -> A:
        with call_context():
            return call_repeatedly(f, x, point.loop_count)

    return Timed(loop, arrays.sync, program=None if program is None else program(f, x))


def judge_loop(arrays: DeviceArrays[A], point: SweepPoint, result: A, measurement: Measurement,
               _f: object, _x: object, agreement: Agreement) -> Judgement:
    """items/s, and the loop's last result against NumPy float64 (a failure once recorded)."""
    expected = reference(sweep_input(point.array_length))
    error = float(np.max(np.abs(arrays.to_numpy(result) - expected)))
    checks: dict[str, Scalar] = {"max_abs_err_vs_numpy_float64": error, "x1_max_abs_err": agreement.largest}
    failures = [] if error <= TOLERANCE else [f"max |f(x) - reference| = {error:.3g} > {TOLERANCE:g}"]
    return Judgement(checks=checks, metrics={"items_per_s": point.items / measurement.median_s},
                     failures=failures)


def format_row(label: str, values: NDArray[np.floating]) -> str:
    return f"  {label:<17} [" + " ".join(f"{v:7.4f}" for v in values) + "]"
