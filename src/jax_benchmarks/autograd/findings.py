"""The autograd group's findings for `verdict`: the fastest gradient implementation at the largest size, against the next. Pure functions of records."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import Finding, fastest_findings

TOPIC = "gradients"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine).
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick",), 7.0),),
    "standard": (("all", (), 8.0),),
    "full": (("all", (), 10.0),),
}


def findings(records: Sequence[Record], target: float) -> list[Finding]:
    return fastest_findings("autograd", records, ("grad_",))
