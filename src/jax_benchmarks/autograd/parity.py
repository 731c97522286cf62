"""Cross-backend parity: every implementation must give the same f and f′.

Each gradient case hands on what it computed (f at x1 and x2; f′ there and at every timed point) as
its judgement's output, which the harness keeps next to the case's record on `run.outputs`. After
`autograd all`, the group's `after` hook (`check_parity`) compares them all, records one `parity`
record whose checks hold the widest differences, and fails the run if they exceed the tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from jax_benchmarks.autograd.reference import F64, TOLERANCE, Evaluation, max_abs_diff
from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.store.record import Record
from jax_benchmarks.run import Run


@dataclass(frozen=True)
class Compared:
    """One implementation in the comparison: its record (backend, variant, device) and its values."""

    record: Record
    values: Evaluation

    @property
    def label(self) -> str:
        return f"{self.record.backend} {self.record.variant} @{self.record.device}"


def compared(run: Run) -> list[Compared]:
    """The gradient cases this run judged, in the order they were recorded."""
    return [Compared(o.record, o.value) for o in run.outputs if isinstance(o.value, Evaluation)]


def widest_gap(arrays: list[F64]) -> float:
    """Max over points of (max − min) across implementations = the largest pairwise |difference|."""
    stacked = np.stack(arrays)
    return max_abs_diff(stacked.max(axis=0), stacked.min(axis=0))


def check_parity(run: Run, show: Callable[[str], None]) -> Record | None:
    """Compare the run's values when two or more backends took part; record, show, then fail if apart."""
    implementations = compared(run)
    if len({c.record.backend for c in implementations}) < 2:
        return None
    points = implementations[0].values.points
    dtype = points.dtype
    tolerance = TOLERANCE[dtype]
    gap_f = widest_gap([c.values.f_shown for c in implementations])
    gap_df = widest_gap([c.values.df_all for c in implementations])
    passed = gap_f <= tolerance and gap_df <= tolerance
    devices = sorted({c.record.device for c in implementations})
    labels = [c.label for c in implementations]
    record = run.record(
        backend="parity",
        case=f"parity_{points.case}",
        device="+".join(devices),
        dtype=dtype,
        params={"compared": labels, "points": points.timed.size + points.shown.size},
        checks={"max_abs_diff_f": gap_f, "max_abs_diff_df": gap_df, "tolerance": tolerance, "passed": passed},
    )
    mark = "[green]✓ same values[/]" if passed else "[red]✗ values differ[/]"
    show(
        f"parity over {len(implementations)} implementations ({', '.join(labels)}):\n"
        f"  max |Δf| = {gap_f:.3g}, max |Δf′| = {gap_df:.3g} (tolerance {tolerance:g}, {dtype}) {mark}"
    )
    if not passed:
        raise CheckFailed(
            f"backends disagree on f/f′: max |Δf| = {gap_f:.3g}, max |Δf′| = {gap_df:.3g} > {tolerance:g}"
        )
    return record
