"""After `scipy all`: do the backends agree on the same data?

Called from the group's `after` hook, which the core runs once every backend
has finished without error and before the table is printed, so the
disagreement record shows in the table and the JSON even when it fails.
"""

from __future__ import annotations

from typing import Any

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.run import Run
from jax_benchmarks.scipy.fit import AGREEMENT_TOLERANCE, largest_disagreement, solve_records

BACKEND = "all"


def check_agreement(run: Run) -> None:
    """Record the largest disagreement between the backends' fits; fail above 1e-3 relative.

    Does nothing with fewer than two fits (a single-backend command).
    """
    solves = solve_records(run.records)
    fits = {r.backend: (float(r.metrics["slope"] or 0.0), float(r.metrics["offset"] or 0.0)) for r in solves}
    if len(fits) < 2:
        return
    worst = largest_disagreement(fits)
    first = solves[0]
    params: dict[str, Any] = {k: first.params[k] for k in ("array_length", "seed", "tol") if k in first.params}
    run.record(
        backend=BACKEND, case=first.case.replace("solve_", "agreement_", 1), device=first.device,
        dtype=first.dtype, params={**params, "backends": sorted(fits)},
        metrics={"max_rel_diff": worst.largest},
        checks={
            "max_slope_rel_diff": worst.slope,
            "max_offset_rel_diff": worst.offset,
            "max_rel_diff": worst.largest,
            "slope_pair": " vs ".join(worst.slope_pair),
            "offset_pair": " vs ".join(worst.offset_pair),
            "limit": AGREEMENT_TOLERANCE,
            "agree": worst.agree,
        },
    )
    verdict = "[green]agree[/]" if worst.agree else "[red]DISAGREE[/]"
    run.log(
        f"largest disagreement between backends: slope {worst.slope:.1e} ({' vs '.join(worst.slope_pair)}), "
        f"offset {worst.offset:.1e} ({' vs '.join(worst.offset_pair)}), relative; "
        f"limit {AGREEMENT_TOLERANCE:g}: {verdict}"
    )
    if not worst.agree:
        raise CheckFailed(
            f"backends disagree by {worst.largest:.1e} relative (limit {AGREEMENT_TOLERANCE:g}): "
            f"slope {worst.slope:.1e} ({' vs '.join(worst.slope_pair)}), offset {worst.offset:.1e} "
            f"({' vs '.join(worst.offset_pair)}); try a smaller --tol"
        )
