"""`--rounds N`'s figures: the spread of each figure across the rounds' medians.

Each round is a fresh process (started by `cli/rounds.py` through the one launcher, `cli/relaunch.py`), so
whatever the machine was doing during a round shows up as variation *between* rounds, which within-round
samples cannot show. A report judges a change against the spread of the per-round medians
(`src/jax_benchmarks/report/compare.py`).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from jax_benchmarks.measure.contention import busy_fields
from jax_benchmarks.store.record import Record


@dataclass(frozen=True)
class FigureSpread:
    case: str
    column: str
    round_medians: list[float]
    busy_rounds: int = 0  # rounds whose figure was taken on a busy machine (measure/contention.py)

    @property
    def median_s(self) -> float:
        return statistics.median(self.round_medians)

    @property
    def spread_pct(self) -> float:
        """(slowest round − fastest round) / median of the round medians, in percent."""
        return (max(self.round_medians) - min(self.round_medians)) / self.median_s * 100


def spreads(records: Sequence[Record]) -> list[FigureSpread]:
    """Per figure: the median of each round (a later record of the same round wins)."""
    by_figure: dict[tuple[str, str], dict[int, float]] = {}
    busy: dict[tuple[str, str], set[int]] = {}
    for record in records:
        if record.median_s is None or record.round_index is None:
            continue
        column = record.backend + (f" {record.variant}" if record.variant else "")
        if record.device != "cpu":
            column += f" @{record.device}"
        by_figure.setdefault((record.case, column), {})[record.round_index] = record.median_s
        if busy_fields(record.contention):
            busy.setdefault((record.case, column), set()).add(record.round_index)
    return [FigureSpread(case, column, [rounds[i] for i in sorted(rounds)], len(busy.get((case, column), ())))
            for (case, column), rounds in by_figure.items()]
