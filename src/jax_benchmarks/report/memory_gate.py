"""Did a figure's memory grow against the baseline? Judged from single runs.

Memory figures are nearly deterministic (the same work allocates the same bytes; XLA's analysis of a
compiled program is exact), so unlike time they need no rounds: a figure is judged "grew" when it is
larger than the baseline's by more than the gate's percentage AND by more than what this machine can
tell from noise: the larger of the figure's absolute floor and the spread its repeats show (the widest
range of the figure over one run's rounds, either run; none from single runs).

The floor of host and device peaks is PEAK_FLOOR, 4 MiB: a peak is measured above what the process
already held, and on a small case that is allocator noise (an A/A pair of single `xla all --quick`
runs gave 16 KiB and 1.38 MiB for the same code: glibc's arenas and Python's pools grow in blocks of
hundreds of KiB to a few MiB), not a figure to gate on. The compiled program's bytes are exact: no floor.
A figure that either record lacks (another machine, a GPU-only figure, an older record) is not judged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.measure.memory import format_bytes
from jax_benchmarks.report.rows import FigureRow
from jax_benchmarks.store.record import Scalar

MIB = 2**20
PEAK_FLOOR = 4 * MIB
# The judged figures and their noise floor in bytes.
JUDGED: Mapping[str, int] = {
    "host_peak_bytes": PEAK_FLOOR,
    "device_peak_bytes": PEAK_FLOOR,
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


def repeats_spread(row: FigureRow, key: str) -> int:
    """The widest range of figure `key` over the rounds of one run, either run (0 from single runs)."""
    spreads = [max(values) - min(values) for side in row.memory_repeats
               if len(values := [v for memory in side if type(v := memory.get(key)) is int]) > 1]
    return max(spreads, default=0)


def floor_text() -> str:
    """What the gate calls noise, for its output line."""
    return (f"host and device peaks change by more than {format_bytes(PEAK_FLOOR)} or the spread their repeats "
            "show, whichever is larger")


def memory_changes(row: FigureRow, baseline: Mapping[str, Scalar], threshold_pct: float) -> list[MemoryChange]:
    """The figures of one row that grew beyond the threshold and beyond what the machine tells from noise: the
    figure's floor or the spread its repeats show, whichever is larger."""
    changes = []
    for key, floor in JUDGED.items():
        now, before = row.record.memory.get(key), baseline.get(key)
        if type(now) is int and type(before) is int and grew(before, now, threshold_pct,
                                                             max(floor, repeats_spread(row, key))):
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
