"""The verdict's A/A guard: the same framework against itself must never be called faster (issue 48, item 4).

`calibrate` runs rounds of unchanged code; here each timed figure with 2 · MIN_ROUNDS rounds or more is split into
its even and its odd rounds (interleaved halves: a drift over the run falls on both sides) and the two halves are
judged exactly as the verdict judges two frameworks (`findings.contrasts`, at the page's margin, the figures of
one group as one family). Any "faster" or "slower" among them is a false decision on this machine.

Pure functions of records: no I/O, no printing, no timing.
"""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.report.compare import MIN_ROUNDS, quiet_rounds, round_medians
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import Contrast, contrasts, figures, label


def aa_contrasts(records: Sequence[Record], margin_pct: float) -> list[Contrast]:
    """Per timed figure with 2 · MIN_ROUNDS quiet rounds or more: its even rounds against its odd rounds."""
    per_group: dict[str, list[tuple[str, list[Record], str, list[Record]]]] = {}
    for key, recs in figures(records).items():
        quiet = quiet_rounds(recs)
        if len(round_medians(quiet)) < 2 * MIN_ROUNDS:
            continue
        indices = sorted({r.round_index for r in quiet}, key=lambda i: -1 if i is None else i)
        even = [r for r in quiet if r.round_index in indices[0::2]]
        odd = [r for r in quiet if r.round_index in indices[1::2]]
        name = f"{key[0]} {key[1]} {label(recs[-1])}"
        per_group.setdefault(key[0], []).append((f"{name} (even rounds)", even, f"{name} (odd rounds)", odd))
    return [c for pairs in per_group.values() for c in contrasts(pairs, margin_pct)]


def called_faster(found: Sequence[Contrast]) -> list[Contrast]:
    """The A/A comparisons the verdict's rule called faster or slower: false decisions."""
    return [c for c in found if c.judged in ("faster", "slower")]


def aa_lines(found: Sequence[Contrast], margin_pct: float) -> list[str]:
    """'verdict A/A at ±10 %: 12 figures, each its even rounds against its odd rounds: 0 called faster or slower
    (10 the same, 2 undecided)', then one line per false decision."""
    if not found:
        return [f"verdict A/A at ±{margin_pct:g} %: no figure has {2 * MIN_ROUNDS} quiet rounds: nothing judged "
                f"(--rounds {2 * MIN_ROUNDS} or more)"]
    false = called_faster(found)
    same = sum(1 for c in found if c.judged == "same")
    lines = [f"verdict A/A at ±{margin_pct:g} %: {len(found)} figure(s), each its even rounds against its odd rounds "
             f"as the verdict judges two frameworks: {len(false)} called faster or slower ({same} the same, "
             f"{len(found) - same - len(false)} undecided)"]
    lines += [f"false decision: {c.phrase()}" for c in false]
    return lines
