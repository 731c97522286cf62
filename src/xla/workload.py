"""The xla workload, written once: every backend runs these steps in this order.

A backend module provides a `LinalgOps` (how its framework generates, reduces,
multiplies and inverts); `run_workload` times each step through the core's
`measure`, records it with its checks, and raises `CheckFailed` after
recording when a check is broken.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Generic, TypeVar

from src.core.devices import gpu_name
from src.core.errors import CheckFailed
from src.core.peaks import datasheet_peak
from src.core.results import Run, Scalar
from src.core.timing import Measurement, Sync, measure, no_sync
from src.xla import checks
from src.xla.settings import XlaSettings

ArrayT = TypeVar("ArrayT")
ScalarT = TypeVar("ScalarT")
R = TypeVar("R")


class LinalgOps(ABC, Generic[ArrayT, ScalarT]):
    """One framework's version of each step. Timed methods return unsynchronized results."""

    name: str  # the backend column: numpy, pytorch, jax
    rng: str  # which generator draws the matrices (recorded in params)
    compiles: bool = False  # first call includes tracing/compilation (reported as compile_s)

    def __init__(self, settings: XlaSettings) -> None:
        self.n = settings.matrix_size
        self.dtype = settings.dtype
        self.sync: Sync = no_sync  # a device-bound framework replaces it

    @abstractmethod
    def uniform_pair(self) -> tuple[ArrayT, ArrayT]:
        """A and B, N×N uniform on [0, 1); the same pair on every call (seeded from --seed)."""

    @abstractmethod
    def means(self, a: ArrayT, b: ArrayT) -> tuple[ScalarT, ScalarT]: ...

    @abstractmethod
    def sums(self, a: ArrayT, b: ArrayT) -> tuple[ScalarT, ScalarT]: ...

    @abstractmethod
    def matmul(self, a: ArrayT, b: ArrayT) -> ArrayT: ...

    @abstractmethod
    def mean(self, x: ArrayT) -> ScalarT:
        """Untimed: the mean of C for its check."""

    @abstractmethod
    def inverse(self, c: ArrayT) -> ArrayT: ...

    @abstractmethod
    def residual(self, c: ArrayT, c_inv: ArrayT) -> ScalarT:
        """max |C·C⁻¹ − I|."""

    @abstractmethod
    def to_float(self, x: ScalarT) -> float: ...

    @abstractmethod
    def dtype_of(self, x: ArrayT) -> str:
        """The element type the framework actually computed in, e.g. 'float64'."""


def measure_keeping_result(fn: Callable[[], R], sync: Sync, repeats: int) -> tuple[R, Measurement]:
    """`measure(fn)` that also hands back the last result, so no step is computed twice.

    The previous result is dropped before the next call starts, so at most one
    result is alive at a time (the memory estimate counts on it).
    """
    last: list[R] = []

    def call() -> R:
        last.clear()
        result = fn()
        last.append(result)
        return result

    measurement = measure(call, sync, repeats=repeats)
    return last[0], measurement


class _Recorder(Generic[ArrayT, ScalarT]):
    """Records one case of one backend; fails loudly after the record is written."""

    def __init__(self, ops: LinalgOps[ArrayT, ScalarT], settings: XlaSettings, run: Run) -> None:
        self.ops = ops
        self.settings = settings
        self.run = run

    def case(self, op: str, matrices: int = 1) -> str:
        n = self.settings.matrix_size
        shape = f"{n}x{n}" if matrices == 1 else f"{matrices}x{n}x{n}"
        return f"{op}_{shape}_{self.settings.dtype}"

    def record(
        self,
        case: str,
        measurement: Measurement,
        checked: list[checks.Check] | None = None,
        extra_checks: dict[str, Scalar] | None = None,
        metrics: dict[str, Scalar] | None = None,
        problems: list[str] | None = None,
    ) -> None:
        checked = checked or []
        self.run.record(
            backend=self.ops.name,
            case=case,
            device=self.settings.device_kind,
            measurement=measurement,
            dtype=self.settings.dtype,
            params={"matrix_size": self.settings.matrix_size, "rng": self.ops.rng, "seed": self.settings.seed},
            compile_s=measurement.compile_s if self.ops.compiles else None,
            metrics=metrics,
            checks={**checks.checks_fields(checked), **(extra_checks or {})},
        )
        for check in checked:
            self.run.log(f"  {self.ops.name} {check.describe()}")
        broken = checks.failures(checked) + (problems or [])
        if broken:
            raise CheckFailed(f"{self.ops.name} {case}: {'; '.join(broken)}")


def peak_figures(gflops: float, settings: XlaSettings) -> tuple[dict[str, Scalar], list[str]]:
    """On a GPU with a published peak: the share of it reached, and a failure if the figure passes it
    (a product that was not waited for, or did less work than 2N³, looks faster than the hardware)."""
    if settings.device_kind != "gpu":
        return {}, []
    peak = datasheet_peak(gpu_name(), settings.dtype, settings.precision)
    if peak is None:
        return {}, []
    metrics: dict[str, Scalar] = {"peak_gflops": peak.gflops, "peak_share": gflops / peak.gflops}
    if gflops > peak.gflops:
        return metrics, [f"{gflops:,.0f} GFLOP/s is above the GPU's peak of {peak.gflops:,.0f} ({peak.source})"]
    return metrics, []


def run_workload(ops: LinalgOps[ArrayT, ScalarT], settings: XlaSettings, run: Run) -> None:
    """Generate, reduce, multiply, invert and check, one recorded case per step."""
    n, repeats, sync = settings.matrix_size, settings.repeats, ops.sync
    rec = _Recorder(ops, settings, run)

    (a, b), m = measure_keeping_result(ops.uniform_pair, sync, repeats)
    rec.record(rec.case("uniform", 2), m)

    (mean_a, mean_b), m = measure_keeping_result(lambda: ops.means(a, b), sync, repeats)
    rec.record(rec.case("mean", 2), m, [
        checks.matrix_mean("mean_a", n, ops.to_float(mean_a)),
        checks.matrix_mean("mean_b", n, ops.to_float(mean_b)),
    ])

    (sum_a, sum_b), m = measure_keeping_result(lambda: ops.sums(a, b), sync, repeats)
    rec.record(rec.case("sum", 2), m, [
        checks.matrix_sum("sum_a", n, ops.to_float(sum_a)),
        checks.matrix_sum("sum_b", n, ops.to_float(sum_b)),
    ])

    c, m = measure_keeping_result(lambda: ops.matmul(a, b), sync, repeats)
    del a, b  # only C is needed from here on (see memory.MATRICES_HELD)
    computed = ops.dtype_of(c)
    wrong_dtype = checks.dtype_failure(settings.dtype, computed)
    gflops = 2 * n**3 / m.median_s / 1e9
    metrics, problems = peak_figures(gflops, settings)
    rec.record(
        rec.case("matmul"), m,
        [checks.product_mean(n, ops.to_float(ops.mean(c)))],
        extra_checks={"computed_dtype": computed},
        metrics={"gflops": gflops, **metrics},
        problems=([wrong_dtype] if wrong_dtype else []) + problems,
    )

    c_inv, m = measure_keeping_result(lambda: ops.inverse(c), sync, repeats)
    rec.record(rec.case("inverse"), m)

    residual, m = measure_keeping_result(lambda: ops.residual(c, c_inv), sync, repeats)
    value = ops.to_float(residual)
    # Recorded and shown, not judged: it grows with cond(C) (~N³ for uniform
    # factors), so float32 inverses of large C are expected to be poor.
    rec.record(rec.case("residual"), m, extra_checks={"residual": value}, metrics={"residual": value})
    run.log(f"  {ops.name} identity residual max|C·C⁻¹ − I| = {value:.3g} ({settings.dtype})")
