"""The scipy group's findings for `verdict`: the fastest fit at the largest size, against the next. Pure functions of records."""

from __future__ import annotations

from collections.abc import Sequence

from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.decide import DEFAULT_MARGIN_PCT
from jax_benchmarks.verdict.findings import Finding, fastest_findings

TOPIC = "the BFGS fit"

# What `verdict --scale` runs of this group (jax_benchmarks.verdict.scale): per scale, (command, options, one
# round's wall time in seconds on the reference machine).
VERDICT_STEPS: dict[str, tuple[tuple[str, tuple[str, ...], float], ...]] = {
    "quick": (("all", ("--quick", "-k", "solve,agreement"), 8.5),),  # 8.0-9.8 s a round, quiet, 2026-11-26
    "standard": (("all", (), 10.6),),  # 10.1-11.1 s a round, quiet, 2026-11-26
    "full": (("all", ("--array-length", "100000"), 20.0),),
}


def findings(records: Sequence[Record], target: float | None,
             margin_pct: float = DEFAULT_MARGIN_PCT) -> list[Finding]:
    return fastest_findings("scipy", records, ("solve_",), margin_pct)


from jax_benchmarks.verdict.findings import GroupFindings, optimizer_agreement

# What the verdict reads of this group (its entry in jax_benchmarks.groups names this). One round on a GPU: 17 s,
# estimated from its one round on an NVIDIA H200, 2026-11-28, which the plan stopped at its 6th record of 8: 11 s from
# its first record to that one (PyTorch's solve, 3.9 s of it its first call), 1 s for the sub-millisecond case and the
# agreement left, and the 3-5 s the other groups' rounds took from one's last record to the next's first. An H100 is
# the same Hopper chip with less and slower memory; the round is start-up, compiles and NumPy's CPU work: as long.
DECLARED = GroupFindings(TOPIC, findings, VERDICT_STEPS, agreement=optimizer_agreement, gpu_round_s={"all": 17.0})
