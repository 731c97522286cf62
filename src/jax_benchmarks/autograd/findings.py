"""The autograd group's findings for `verdict`: the fastest gradient implementation at the largest size, against the next. Pure functions of records."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import Finding, fastest_findings

TOPIC = "gradients"


def findings(records: Sequence[Record], target: float) -> list[Finding]:
    return fastest_findings("autograd", records, ("grad_",))
