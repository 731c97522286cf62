"""After `scipy all`: do the backends agree on the same data?

Called from the group's `after` hook, which the core runs once every backend has finished without error
and before the table is printed, so the agreement record shows in the table and the JSON even when it
fails. Each solve case hands its fit on (jax_benchmarks.measure.agreement, the one mechanism).
"""

from __future__ import annotations

from typing import Any

from jax_benchmarks.measure.agreement import Agreement, computed, record_agreement
from jax_benchmarks.scipy.cases import AGREEMENT
from jax_benchmarks.scipy.fit import AGREEMENT_TOLERANCE
from jax_benchmarks.store.results import Run


def check_agreement(run: Run) -> Agreement | None:
    """Record the largest relative difference between the backends' slopes and offsets; fail above 1e-3.

    Does nothing with fewer than two fits (a single-backend command).
    """
    kept = computed(run, AGREEMENT)
    if not kept:
        return None
    first = kept[0][0]
    params: dict[str, Any] = {k: first.params[k] for k in ("array_length", "seed", "tol") if k in first.params}
    return record_agreement(run, AGREEMENT, tolerance=AGREEMENT_TOLERANCE, difference="rel", params=params,
                            hint="try a smaller --tol", case=first.case.removeprefix("solve_"))
