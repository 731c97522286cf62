"""The scipy group's findings for `verdict`: the fastest fit at the largest size, against the next. Pure functions of records."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import Finding, fastest_findings

TOPIC = "the BFGS fit"


def findings(records: Sequence[Record], target: float) -> list[Finding]:
    return fastest_findings("scipy", records, ("solve_",))
