"""The xla workload, declared once: every backend runs these six cases in this order.

A backend module provides a `LinalgOps` (how its framework generates, reduces, multiplies and
inverts) and declares its suite with `workload_suite`; the core (`jax_benchmarks.measure.harness`) times each case
through `measure`, judges and records it, and raises `CheckFailed` once every selected case is recorded.

The cases share their matrices as the suite's fixtures (`matrix_fixtures`): a case receives what it uses
(made untimed when no earlier case provided it, so `-k matmul` alone works), and a timed step provides its
result to the steps after it, so nothing is computed twice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any, Generic, TypeVar

from jax_benchmarks.hardware.devices import gpu_name
from jax_benchmarks.measure.harness import Case, Fixture, Judgement, no_judgement, Recorder, Suite, Target, Timed
from jax_benchmarks.measure.memory import format_bytes, memory_text
from jax_benchmarks.hardware.peaks import cpu_facts, cpu_peak, datasheet_peak, share_of_peak
from jax_benchmarks.store.record import Scalar
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
        # What every framework's steps need of the settings, read once (the suite reads them here too).
        self.n = settings.matrix_size
        self.dtype = settings.dtype
        self.seed = settings.seed  # the matrices' generator is seeded from it
        self.device_kind = settings.device_kind

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


def matrix_fixtures(ops: LinalgOps[ArrayT, ScalarT]) -> tuple[Fixture[tuple[ArrayT, ArrayT]], Fixture[ArrayT],
                                                               Fixture[ArrayT]]:
    """A and B, C = A·B and C⁻¹, each built untimed (and waited for: the next timed call must not wait
    for it) when no earlier case provided it. The harness drops each once no case still to run needs it,
    so at most A, B and C, then C, C⁻¹ and C·C⁻¹ are alive at once (memory.MATRICES_HELD)."""

    def ready(value: Any) -> Any:
        ops.sync(value)
        return value

    pair: Fixture[tuple[ArrayT, ArrayT]] = Fixture("A, B", lambda: ready(ops.uniform_pair()))
    product: Fixture[ArrayT] = Fixture("C = A·B", lambda ab: ready(ops.matmul(*ab)), needs=(pair,))
    inverse: Fixture[ArrayT] = Fixture("C⁻¹", lambda c: ready(ops.inverse(c)), needs=(product,))
    return pair, product, inverse


def peak_figures(gflops: float, settings: XlaSettings) -> tuple[dict[str, Scalar], list[str]]:
    """The share of the physical peak reached (a GPU's datasheet; a CPU's from what the OS reports), and a
    failure if the figure passes it (a product that was not waited for, or did less work than 2N³, looks
    faster than the hardware). A CPU whose maximum clock is not reported is checked against its ceiling
    at the fastest x86 clock, and gets no share."""
    gpu = settings.device_kind == "gpu"
    facts = None if gpu else cpu_facts()
    if facts is None:
        peak = datasheet_peak(gpu_name(), settings.dtype, settings.precision)
    else:
        peak, _ = cpu_peak(facts, settings.dtype, ceiling=True)
    if peak is None:
        return {}, []
    share, error = share_of_peak(gflops, peak, "the GPU's" if gpu else "this CPU's")
    if error is not None:
        return {}, [error]
    if facts is not None and facts.max_mhz is None:
        return {}, []  # a ceiling, not a peak to share against
    return {"peak_gflops": peak.gflops, "peak_share": share}, []


CHECKS_PASSED = ("  {backend}: the sanity checks passed (values against the expected ones, memory above the "
                 "matrices' bytes; -v shows each)")


def workload_suite(
    ops: LinalgOps[ArrayT, ScalarT], settings: XlaSettings, *,
    context: Callable[[], AbstractContextManager[object]] = nullcontext,
    before: Callable[[Recorder], None] | None = None, after: Callable[[Recorder], None] | None = None,
) -> Suite:
    """Generate, reduce, multiply, invert and check on the settings' device: one case per step, sharing
    the matrices as fixtures (a timed step provides its result to the steps after it)."""
    n, dtype = ops.n, ops.dtype
    params = {"matrix_size": n, "rng": ops.rng, "seed": ops.seed}
    pair, product, inverse = matrix_fixtures(ops)

    def case(op: str, prepare: Callable[..., Timed[Any]], judge: Callable[..., Judgement] = no_judgement, *,
             matrices_in_shape: int = 1, held: int = 2, uses: tuple[Fixture[Any], ...] = (),
             provides: Fixture[Any] | None = None) -> Case[Any]:
        """`held`: the N×N matrices alive while the case runs (its inputs and outputs), its memory floor."""
        shape = f"{n}x{n}" if matrices_in_shape == 1 else f"{matrices_in_shape}x{n}x{n}"
        floor = held * n * n * ITEMSIZE[dtype]

        def judge_with_floor(result: Any, measurement: Measurement, *values: Any) -> Judgement:
            judgement = judge(result, measurement, *values)
            fields, below = checks.memory_floor(measurement.memory, floor, ops.device_kind)
            # The product's footprint, logged: what A·B costs above its inputs, against the matrices' bytes.
            footprint = memory_text(measurement.memory) if op == "matmul" else ""
            notes = ([f"  {ops.name} product memory: {footprint} (A, B and C hold {format_bytes(floor)})"]
                     if footprint and settings.verbose else [])
            return replace(judgement, checks={**judgement.checks, **fields},
                           failures=[*judgement.failures, *below], notes=[*judgement.notes, *notes])

        return Case(f"{op}_{shape}_{dtype}", prepare, judge_with_floor, dtype=dtype, params=params,
                    compiled=ops.compiles, uses=uses, provides=provides)

    def reduce(op: str, step: Callable[[ArrayT, ArrayT], tuple[ScalarT, ScalarT]],
               check: Callable[[str, int, float], checks.Check]) -> Case[Any]:
        def prepare(ab: tuple[ArrayT, ArrayT]) -> Timed[tuple[ScalarT, ScalarT]]:
            return Timed(lambda: step(*ab), ops.sync, program=ops.program(getattr(step, "__name__"), *ab))

        def judge(values: tuple[ScalarT, ScalarT], _: Measurement, _ab: object) -> Judgement:
            return checks.judged(ops.name, [check(f"{op}_a", n, ops.to_float(values[0])),
                                            check(f"{op}_b", n, ops.to_float(values[1]))], verbose=settings.verbose)

        return case(op, prepare, judge, matrices_in_shape=2, uses=(pair,))

    def multiply(ab: tuple[ArrayT, ArrayT]) -> Timed[ArrayT]:
        return Timed(lambda: ops.matmul(*ab), ops.sync, program=ops.program("matmul", *ab))

    def judge_product(c: ArrayT, measurement: Measurement, _ab: object) -> Judgement:
        computed = ops.dtype_of(c)
        wrong_dtype = checks.dtype_failure(dtype, computed)
        gflops = 2 * n**3 / measurement.median_s / 1e9
        peak_metrics, above_peak = peak_figures(gflops, settings)
        mean_c = ops.to_float(ops.mean(c))
        return checks.judged(
            ops.name, [checks.product_mean(n, mean_c)], verbose=settings.verbose,
            extra_checks={"computed_dtype": computed}, metrics={"gflops": gflops, **peak_metrics},
            problems=([wrong_dtype] if wrong_dtype else []) + above_peak,
        )

    def invert(c: ArrayT) -> Timed[ArrayT]:
        return Timed(lambda: ops.inverse(c), ops.sync, program=ops.program("inverse", c))

    def residual(c: ArrayT, c_inv: ArrayT) -> Timed[ScalarT]:
        return Timed(lambda: ops.residual(c, c_inv), ops.sync, program=ops.program("residual", c, c_inv))

    def judge_residual(value: ScalarT, _: Measurement, _c: object, _c_inv: object) -> Judgement:
        # Recorded and shown, not judged: it grows with cond(C) (~N³ for uniform
        # factors), so float32 inverses of large C are expected to be poor.
        residual = ops.to_float(value)
        return Judgement(
            checks={"residual": residual}, metrics={"residual": residual},
            notes=[f"  {ops.name} identity residual max|C·C⁻¹ − I| = {residual:.3g} ({dtype})"] if settings.verbose
            else [],
        )

    cases = [
        case("uniform", lambda: Timed(ops.uniform_pair, ops.sync, program=ops.program("uniform_pair")),
             matrices_in_shape=2, provides=pair),
        reduce("mean", ops.means, checks.matrix_mean),
        reduce("sum", ops.sums, checks.matrix_sum),
        case("matmul", multiply, judge_product, held=3, uses=(pair,), provides=product),  # A, B and C
        case("inverse", invert, uses=(product,), provides=inverse),  # C and C⁻¹
        case("residual", residual, judge_residual, uses=(product, inverse)),
    ]
    def after_checks(run: Recorder) -> None:
        """After every selected case passed its checks (a failed one ends the suite first): one line for them."""
        if not settings.verbose and run.records:
            run.log(CHECKS_PASSED.format(backend=ops.name))
        if after is not None:
            after(run)

    return Suite(Target(ops.name, ops.device_kind), cases, before=before, after=after_checks, context=context,
                 fixtures=[pair, product, inverse])
