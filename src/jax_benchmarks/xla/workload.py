"""The xla workload, declared once: every backend runs these six cases in this order.

A backend module provides a `LinalgOps` (how its framework generates, reduces, multiplies and
inverts) and declares its suite with `workload_suite`; the core (`jax_benchmarks.measure.harness`) times each case
through `measure`, judges and records it, and raises `CheckFailed` once every selected case is recorded.

The cases share their matrices through `Matrices`: a case takes what it needs from there (made untimed
when no earlier case made it, so `-k matmul` alone works) and hands its own result over for the next.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any, Generic, TypeVar

from jax_benchmarks.hardware.devices import gpu_name
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed
from jax_benchmarks.measure.memory import format_bytes, memory_text
from jax_benchmarks.hardware.peaks import datasheet_peak
from jax_benchmarks.store.results import Run, Scalar
from jax_benchmarks.measure.timing import Measurement, Sync, no_sync
from jax_benchmarks.xla import checks
from jax_benchmarks.xla.settings import ITEMSIZE, XlaSettings

ArrayT = TypeVar("ArrayT")
ScalarT = TypeVar("ScalarT")


class LinalgOps(ABC, Generic[ArrayT, ScalarT]):
    """One framework's version of each step. Timed methods return unsynchronized results.

    Constructing one allocates nothing and starts no device: a suite is declared (and `list`ed) from
    it; a framework's generators, devices and keys are made on first use.
    """

    name: str  # the backend column: numpy, pytorch, jax
    compiles: bool = False  # first call includes tracing/compilation (reported as compile_s)

    def __init__(self, settings: XlaSettings) -> None:
        self.n = settings.matrix_size
        self.dtype = settings.dtype

    @property
    @abstractmethod
    def rng(self) -> str:
        """Which generator draws the matrices (recorded in params); known without drawing."""

    @property
    def sync(self) -> Sync:
        """Waits for a result; a device-bound framework replaces it."""
        return no_sync

    def program(self, step: str, *args: Any) -> Callable[[], object] | None:
        """How the compiled program of a step (`uniform_pair`, `matmul`, ...) on these inputs is obtained,
        for its memory analysis (`Timed.program`); None where the framework compiles nothing."""
        return None

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


class Matrices(Generic[ArrayT, ScalarT]):
    """A, B, C = A·B and C⁻¹ as the cases need them, each made once.

    A timed case hands its last result over (`keep_*`); a case whose inputs no earlier case made gets
    them made here, untimed and waited for. Held at once: A, B and C, then C and C⁻¹ (A and B are
    dropped as soon as C exists: only C is needed from there on, see memory.MATRICES_HELD).
    """

    def __init__(self, ops: LinalgOps[ArrayT, ScalarT]) -> None:
        self.ops = ops
        self._pair: tuple[ArrayT, ArrayT] | None = None
        self._product: ArrayT | None = None
        self._inverse: ArrayT | None = None

    def _ready(self, value: Any) -> Any:
        self.ops.sync(value)  # made untimed: the next timed call must not wait for it
        return value

    def pair(self) -> tuple[ArrayT, ArrayT]:
        if self._pair is None:
            self._pair = self._ready(self.ops.uniform_pair())
        return self._pair

    def product(self) -> ArrayT:
        if self._product is None:
            a, b = self.pair()
            self.keep_product(self._ready(self.ops.matmul(a, b)))
        assert self._product is not None
        return self._product

    def inverse(self) -> ArrayT:
        if self._inverse is None:
            self._inverse = self._ready(self.ops.inverse(self.product()))
        return self._inverse

    def keep_pair(self, pair: tuple[ArrayT, ArrayT]) -> None:
        self._pair = pair

    def keep_product(self, c: ArrayT) -> None:
        self._product = c
        self._pair = None

    def keep_inverse(self, c_inv: ArrayT) -> None:
        self._inverse = c_inv

    def release(self) -> None:
        self._pair = self._product = self._inverse = None


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


def judged(ops: LinalgOps[Any, Any], checked: list[checks.Check], *,
           extra_checks: Mapping[str, Scalar] | None = None, metrics: Mapping[str, Scalar] | None = None,
           problems: Sequence[str] = ()) -> Judgement:
    """The checks' record fields and log lines; a broken check, or a problem, is a failure."""
    return Judgement(
        checks={**checks.checks_fields(checked), **(extra_checks or {})},
        metrics=metrics or {},
        failures=[*checks.failures(checked), *problems],
        notes=[f"  {ops.name} {check.describe()}" for check in checked],
    )


def workload_cases(ops: LinalgOps[ArrayT, ScalarT], settings: XlaSettings,
                   matrices: Matrices[ArrayT, ScalarT]) -> list[Case[Any]]:
    """Generate, reduce, multiply, invert and check: one case per step."""
    n, dtype = settings.matrix_size, settings.dtype
    params = {"matrix_size": n, "rng": ops.rng, "seed": settings.seed}

    def case(op: str, prepare: Callable[[], Timed[Any]], judge: Callable[[Any, Measurement], Judgement],
             matrices_in_shape: int = 1, held: int = 2) -> Case[Any]:
        """`held`: the N×N matrices alive while the case runs (its inputs and outputs), its memory floor."""
        shape = f"{n}x{n}" if matrices_in_shape == 1 else f"{matrices_in_shape}x{n}x{n}"

        def judge_with_floor(result: Any, measurement: Measurement) -> Judgement:
            judgement = judge(result, measurement)
            floor = held * n * n * ITEMSIZE[dtype]
            fields, below = checks.memory_floor(measurement.memory, floor, settings.device_kind)
            # The product's footprint, logged: what A·B costs above its inputs, against the matrices' bytes.
            footprint = memory_text(measurement.memory) if op == "matmul" else ""
            notes = ([f"  {ops.name} product memory: {footprint} (A, B and C hold {format_bytes(floor)})"]
                     if footprint else [])
            return replace(judgement, checks={**judgement.checks, **fields},
                           failures=[*judgement.failures, *below], notes=[*judgement.notes, *notes])

        return Case(f"{op}_{shape}_{dtype}", prepare, judge_with_floor, dtype=dtype, params=params,
                    compiled=ops.compiles)

    def keep_pair(pair: tuple[ArrayT, ArrayT], _: Measurement) -> Judgement:
        matrices.keep_pair(pair)
        return Judgement()

    def reduce(op: str, step: Callable[[ArrayT, ArrayT], tuple[ScalarT, ScalarT]],
               check: Callable[[str, int, float], checks.Check]) -> Case[Any]:
        def prepare() -> Timed[tuple[ScalarT, ScalarT]]:
            a, b = matrices.pair()
            return Timed(lambda: step(a, b), ops.sync, program=ops.program(getattr(step, "__name__"), a, b))

        def judge(values: tuple[ScalarT, ScalarT], _: Measurement) -> Judgement:
            return judged(ops, [check(f"{op}_a", n, ops.to_float(values[0])),
                                check(f"{op}_b", n, ops.to_float(values[1]))])

        return case(op, prepare, judge, 2)

    def multiply() -> Timed[ArrayT]:
        a, b = matrices.pair()
        return Timed(lambda: ops.matmul(a, b), ops.sync, program=ops.program("matmul", a, b))

    def judge_product(c: ArrayT, measurement: Measurement) -> Judgement:
        computed = ops.dtype_of(c)
        wrong_dtype = checks.dtype_failure(dtype, computed)
        gflops = 2 * n**3 / measurement.median_s / 1e9
        peak_metrics, above_peak = peak_figures(gflops, settings)
        mean_c = ops.to_float(ops.mean(c))
        matrices.keep_product(c)  # A and B are not needed from here on
        return judged(
            ops, [checks.product_mean(n, mean_c)],
            extra_checks={"computed_dtype": computed}, metrics={"gflops": gflops, **peak_metrics},
            problems=([wrong_dtype] if wrong_dtype else []) + above_peak,
        )

    def invert() -> Timed[ArrayT]:
        c = matrices.product()
        return Timed(lambda: ops.inverse(c), ops.sync, program=ops.program("inverse", c))

    def keep_inverse(c_inv: ArrayT, _: Measurement) -> Judgement:
        matrices.keep_inverse(c_inv)
        return Judgement()

    def residual() -> Timed[ScalarT]:
        c, c_inv = matrices.product(), matrices.inverse()
        return Timed(lambda: ops.residual(c, c_inv), ops.sync, program=ops.program("residual", c, c_inv))

    def judge_residual(value: ScalarT, _: Measurement) -> Judgement:
        # Recorded and shown, not judged: it grows with cond(C) (~N³ for uniform
        # factors), so float32 inverses of large C are expected to be poor.
        residual = ops.to_float(value)
        return Judgement(
            checks={"residual": residual}, metrics={"residual": residual},
            notes=[f"  {ops.name} identity residual max|C·C⁻¹ − I| = {residual:.3g} ({dtype})"],
        )

    return [
        case("uniform", lambda: Timed(ops.uniform_pair, ops.sync, program=ops.program("uniform_pair")), keep_pair, 2),
        reduce("mean", ops.means, checks.matrix_mean),
        reduce("sum", ops.sums, checks.matrix_sum),
        case("matmul", multiply, judge_product, held=3),  # A, B and C
        case("inverse", invert, keep_inverse),
        case("residual", residual, judge_residual),
    ]


def workload_suite(
    ops: LinalgOps[ArrayT, ScalarT], settings: XlaSettings, *,
    context: Callable[[], AbstractContextManager[object]] = nullcontext,
    before: Callable[[Run], None] | None = None,
    after: Callable[[Run, Matrices[ArrayT, ScalarT]], None] | None = None,
) -> Suite:
    """The six cases on the settings' device; `after` gets the matrices to release them."""
    matrices = Matrices(ops)
    return Suite(
        Target(ops.name, settings.device_kind), workload_cases(ops, settings, matrices),
        before=before, after=None if after is None else lambda run: after(run, matrices), context=context,
    )
