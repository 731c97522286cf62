"""What the xla workload must compute, written once for every backend.

For A, B uniform on [0, 1) and C = A·B:
* mean(A) = mean(B) = 1/2 and sum = N²/2, with a standard deviation of
  sqrt(1/12)/N on the mean;
* mean(C) = N/4: mean(C) = (1/N²) Σ_k r_k s_k with r_k, s_k the column sums of
  A and row sums of B, whose variance works out at 1/24 + 1/(144 N).

Each value must be within 1 % (relative) of its expectation. That is 6 standard deviations
or more once N ≥ 500; for smaller N a correct result misses 1 % by chance
(at N = 64 a third of all seeds would), so the tolerance is the larger of
1 % and 6 σ. A broken result (zeros, garbage read before the device finished,
a silently truncated dtype) misses by far more than either.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.measure.harness import Judgement
from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.measure.relative import relative_error
from jax_benchmarks.store.record import Scalar

MIN_REL_TOL = 0.01
SIGMAS = 6.0
UNIFORM_STD = math.sqrt(1 / 12)


@dataclass(frozen=True)
class Check:
    """One computed value against its expectation."""

    name: str
    value: float
    expected: float
    rel_tol: float

    @property
    def rel_error(self) -> float:
        return relative_error(self.value, self.expected)

    @property
    def ok(self) -> bool:
        return math.isfinite(self.value) and self.rel_error < self.rel_tol

    def fields(self) -> dict[str, Scalar]:
        """The record's `checks` entries of this check."""
        return {
            self.name: self.value,
            f"{self.name}_expected": self.expected,
            f"{self.name}_rel_error": self.rel_error,
            f"{self.name}_rel_tol": self.rel_tol,
            f"{self.name}_ok": self.ok,
        }

    def describe(self) -> str:
        mark = "ok" if self.ok else "FAILED"
        return (
            f"{self.name} = {self.value:.6g} (expected {self.expected:.6g}, "
            f"error {self.rel_error:.2%} < {self.rel_tol:.2%}: {mark})"
        )


def tolerance(sigma_rel: float) -> float:
    """Relative tolerance: 1 %, widened to 6 σ where N is too small for 1 %."""
    return max(MIN_REL_TOL, SIGMAS * sigma_rel)


def uniform_mean_sigma_rel(n: int) -> float:
    """Relative standard deviation of the mean of N² uniforms on [0, 1)."""
    return UNIFORM_STD / n / 0.5


def product_mean_sigma_rel(n: int) -> float:
    """Relative standard deviation of mean(A·B) for uniform A, B."""
    return math.sqrt(1 / 24 + 1 / (144 * n)) / (n / 4)


def matrix_mean(name: str, n: int, value: float) -> Check:
    return Check(name, value, 0.5, tolerance(uniform_mean_sigma_rel(n)))


def matrix_sum(name: str, n: int, value: float) -> Check:
    return Check(name, value, n * n / 2, tolerance(uniform_mean_sigma_rel(n)))


def product_mean(n: int, value: float) -> Check:
    return Check("mean_c", value, n / 4, tolerance(product_mean_sigma_rel(n)))


def judged(backend: str, checked: list[Check], *, verbose: bool, extra_checks: Mapping[str, Scalar] | None = None,
           metrics: Mapping[str, Scalar] | None = None, problems: Sequence[str] = ()) -> Judgement:
    """The checks' record fields (then `extra_checks`), and with `verbose` a log line each; a broken check, or a
    problem, is a failure (its line is the error's)."""
    fields: dict[str, Scalar] = {}
    for check in checked:
        fields.update(check.fields())
    return Judgement(
        checks={**fields, **(extra_checks or {})},
        metrics=dict(metrics or {}),
        failures=[*(check.describe() for check in checked if not check.ok), *problems],
        notes=[f"  {backend} {check.describe()}" for check in checked] if verbose else [],
    )


def dtype_failure(requested: str, computed: str) -> str | None:
    """A framework that silently computes in another dtype (JAX without x64) is a failure."""
    if computed != requested:
        return f"computed in {computed}, {requested} was requested"
    return None


def memory_floor(memory: Mapping[str, Scalar], floor_bytes: int, device: str) -> tuple[dict[str, Scalar], list[str]]:
    """The physical floor of a memory figure: while a case runs, its matrices are resident, so the memory
    in use at its peak (what was held before plus the peak above it) is at least their bytes: on the
    host for a case on the CPU, in the allocator for a case on a GPU. A figure below it was misread
    (a unit, a reset at the wrong time) or the matrices were swapped out: a failure either way.
    No figure (unavailable, `host_status` / `device_status` says why): nothing to check."""
    where = "device" if device == "gpu" else "host"
    held, peak = memory.get(f"{where}_held_bytes"), memory.get(f"{where}_peak_bytes")
    if type(held) is not int or type(peak) is not int:
        return {}, []
    in_use = held + peak
    ok = in_use >= floor_bytes
    fields: dict[str, Scalar] = {"memory_floor_bytes": floor_bytes, "memory_floor_ok": ok}
    if ok:
        return fields, []
    return fields, [f"{where} memory in use at the peak, {format_bytes(in_use)} ({in_use} bytes), is below the "
                    f"{format_bytes(floor_bytes)} ({floor_bytes} bytes) its matrices hold"]
