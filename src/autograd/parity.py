"""Cross-backend parity: every implementation must give the same f and f′.

Backends publish what they computed (f at x1 and x2; f′ there and at every
timed point) into a book keyed by run id; after `autograd all` the group's
`after` hook compares them pairwise, records one `parity` record whose checks
hold the max abs differences, and fails the run if they exceed the tolerance.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from src.autograd.reference import F64, TOLERANCE, Points, max_abs_diff
from src.core.errors import CheckFailed
from src.core.results import Record, Run


@dataclass(frozen=True)
class Evaluation:
    backend: str
    label: str  # "jax vmap+jit @cpu"
    device: str
    points: Points
    f: F64  # f at [x1, *x2]
    df: F64  # f′ at [x1, *x2, *timed points]


class ParityBook:
    """Evaluations of the runs in progress (in-process only; the records keep the figures)."""

    def __init__(self) -> None:
        self._runs: dict[str, list[Evaluation]] = {}

    def add(self, run_id: str, evaluation: Evaluation) -> None:
        self._runs.setdefault(run_id, []).append(evaluation)

    def take(self, run_id: str) -> list[Evaluation]:
        return self._runs.pop(run_id, [])


BOOK = ParityBook()


def widest_gap(arrays: list[F64]) -> float:
    """Max over points of (max − min) across implementations = the largest pairwise |difference|."""
    stacked = np.stack(arrays)
    return max_abs_diff(stacked.max(axis=0), stacked.min(axis=0))


def check_parity(run: Run, show: Callable[[str], None], book: ParityBook = BOOK) -> Record | None:
    """Compare the run's evaluations when two or more backends took part; record, show, then fail if apart."""
    evaluations = book.take(run.run_id)
    if len({e.backend for e in evaluations}) < 2:
        return None
    points = evaluations[0].points
    dtype = points.dtype
    tolerance = TOLERANCE[dtype]
    gap_f = widest_gap([e.f for e in evaluations])
    gap_df = widest_gap([e.df for e in evaluations])
    passed = gap_f <= tolerance and gap_df <= tolerance
    devices = sorted({e.device for e in evaluations})
    record = run.record(
        backend="parity",
        case=f"parity_{points.case}",
        device="+".join(devices),
        dtype=dtype,
        params={"compared": [e.label for e in evaluations], "points": points.timed.size + points.shown.size},
        checks={"max_abs_diff_f": gap_f, "max_abs_diff_df": gap_df, "tolerance": tolerance, "passed": passed},
    )
    mark = "[green]✓ same values[/]" if passed else "[red]✗ values differ[/]"
    show(
        f"parity over {len(evaluations)} implementations ({', '.join(e.label for e in evaluations)}):\n"
        f"  max |Δf| = {gap_f:.3g}, max |Δf′| = {gap_df:.3g} (tolerance {tolerance:g}, {dtype}) {mark}"
    )
    if not passed:
        raise CheckFailed(
            f"backends disagree on f/f′: max |Δf| = {gap_f:.3g}, max |Δf′| = {gap_df:.3g} > {tolerance:g}"
        )
    return record
