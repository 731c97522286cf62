"""Did a figure's memory grow against the baseline? Judged from single runs.

Memory figures are nearly deterministic (the same work allocates the same bytes; XLA's analysis of a
compiled program is exact), so unlike time they need no rounds: a figure is judged "grew" when it is
larger than the baseline's by more than the gate's percentage AND by more than the figure's noise
floor in bytes. The floor is the resident-memory granularity for host and device peaks (pages, the
allocator's blocks: a 4 KiB page more is not a regression), and nothing for the compiled program.
A figure that either record lacks (another machine, a GPU-only figure, an older record) is not judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.report.rows import FigureRow
from jax_benchmarks.store.record import Scalar

MIB = 2**20
# The judged figures and their noise floor in bytes.
JUDGED: Mapping[str, int] = {
    "host_peak_bytes": MIB,
    "device_peak_bytes": MIB,
    "compiled_temp_bytes": 0,
    "compiled_argument_bytes": 0,
    "compiled_output_bytes": 0,
}


@dataclass(frozen=True)
class MemoryChange:
    group: str
    case: str
    column: str
    key: str
    baseline_bytes: int
    bytes: int

    @property
    def change_pct(self) -> float:
        return (self.bytes - self.baseline_bytes) / self.baseline_bytes * 100 if self.baseline_bytes else float("inf")

    def text(self) -> str:
        return (f"{self.group} {self.case} {self.column} {self.key} {format_bytes(self.baseline_bytes)} → "
                f"{format_bytes(self.bytes)} ({self.change_pct:+.1f} %)")


def grew(baseline: int, now: int, threshold_pct: float, floor: int) -> bool:
    return now - baseline > floor and now > baseline * (1 + threshold_pct / 100)


def memory_changes(row: FigureRow, baseline: Mapping[str, Scalar], threshold_pct: float) -> list[MemoryChange]:
    """The figures of one row that grew beyond the threshold."""
    changes = []
    for key, floor in JUDGED.items():
        now, before = row.record.memory.get(key), baseline.get(key)
        if type(now) is int and type(before) is int and grew(before, now, threshold_pct, floor):
            changes.append(MemoryChange(row.group, row.case, row.column, key, before, now))
    return changes


@dataclass(frozen=True)
class MemoryVerdict:
    judged: int  # rows with memory figures on both sides
    grown: list[MemoryChange]


def judge_memory(rows: Sequence[FigureRow], threshold_pct: float) -> MemoryVerdict:
    """Every row with a baseline's memory figures, judged against ±threshold_pct from this single run."""
    judged = [row for row in rows if row.baseline_memory and row.record.memory]
    grown = [change for row in judged if row.baseline_memory is not None
             for change in memory_changes(row, row.baseline_memory, threshold_pct)]
    return MemoryVerdict(len(judged), grown)
