"""Figures derived from two measured ones, only where both were taken under like conditions, and never
beyond their physical bound.

A ratio of two figures says something only if both saw the same machine: an epoch timed while other
processes held the cores, over a step timed on a quiet machine, reads as a large loop overhead that the
loop does not have; the other way round it reads as a negative one (an epoch faster than its steps, which
no loop can be). Seen on a busy 2-core machine: `loop overhead -46.6%`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from jax_benchmarks.hardware.peaks import Peak, cpu_facts, cpu_peak, share_of_peak
from jax_benchmarks.measure.contention import of_fields
from jax_benchmarks.store.record import Scalar

# An epoch cannot take less time than its steps: a loop overhead below this is a measurement error (the
# two figures were not taken under the same conditions, or one of them is wrong), not a figure. 5 %
# leaves room for the step's own spread between its timed samples and the epoch's steps.
LOWEST_OVERHEAD = -0.05


@dataclass(frozen=True)
class Derived:
    """A derived figure, or None and the sentence saying why it is not given."""

    value: float | None
    why_not: str | None = None
    busy: str | None = None  # which of the two figures was taken on a busy machine ("the step", "the epoch")


def busy_text(contention: Mapping[str, Scalar]) -> str | None:
    """'other processes took 1.6 of 2 cores' where the figure was taken on a busy machine, else None."""
    seen = of_fields(contention)
    return seen.sentence() if seen is not None and seen.busy else None


def loop_overhead(epoch_s: float, epoch_contention: Mapping[str, Scalar], step_s: float,
                  step_contention: Mapping[str, Scalar], steps: int) -> Derived:
    """The epoch's time over `steps` compiled steps, less 1: what the training loop adds around the steps.
    Not given where either figure was taken on a busy machine (the two were not taken under like
    conditions), nor below LOWEST_OVERHEAD (a measurement error, explained)."""
    for name, contention in (("the step", step_contention), ("the epoch", epoch_contention)):
        busy = busy_text(contention)
        if busy is not None:
            return Derived(None, f"no loop overhead: {name} was timed on a busy machine ({busy}), so the epoch "
                                 "and the step were not timed under like conditions", name)
    overhead = epoch_s / (step_s * steps) - 1.0
    if overhead < LOWEST_OVERHEAD:
        return Derived(None, f"no loop overhead: the epoch ({epoch_s:.3g} s) took {-overhead:.0%} less than "
                             f"{steps} steps timed alone ({step_s * 1e3:.3g} ms each), which no loop can do: a "
                             "measurement error (the step and the epoch saw different machines, e.g. other "
                             "programs running during one of them)")
    return Derived(overhead)


def peak_share(rate_gflops: float, peak_gflops: float | None, source: str = "") -> tuple[dict[str, float], list[str]]:
    """`peak_share` of a measured rate (metrics, at most 1) or, above the peak, a failure (a measurement
    error); nothing where no peak is known."""
    if peak_gflops is None:
        return {}, []
    share, error = share_of_peak(rate_gflops, Peak(peak_gflops, source or "physical peak"))
    return ({} if share is None else {"peak_share": share}), ([] if error is None else [error])


def cpu_rate_errors(rate_gflops: float, dtype: str) -> list[str]:
    """A rate measured on this CPU above what it can compute (its physical peak, or where the OS reports
    no maximum clock its ceiling at the fastest x86 clock): the measurement error, else nothing."""
    ceiling, _ = cpu_peak(cpu_facts(), dtype, ceiling=True)
    return [] if ceiling is None else peak_share(rate_gflops, ceiling.gflops, ceiling.source)[1]
