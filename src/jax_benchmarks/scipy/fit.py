"""What every backend does with its fit: record it, check it, compare it.

Framework-free (NumPy is not even needed), so the CLI's summary can use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from jax_benchmarks.measure.harness import Judgement
from jax_benchmarks.measure.relative import relative_error
from jax_benchmarks.store.results import Record, Scalar
from jax_benchmarks.cli.tables import format_seconds
from jax_benchmarks.measure.timing import Measurement

TRUE_SLOPE = 1.5
TRUE_OFFSET = 3.0
SLOPE_TOLERANCE = 0.05  # recovered slope within 5 % of 1.5
OFFSET_TOLERANCE = 0.10  # recovered offset within 10 % of 3
AGREEMENT_TOLERANCE = 1e-3  # backends agree on slope and offset to 1e-3 relative


@dataclass(frozen=True)
class Fit:
    """One optimizer's answer and what it cost."""

    method: str  # "BFGS" or "L-BFGS": said in the table, torch has no BFGS
    slope: float
    offset: float
    loss: float
    iterations: int
    evaluations: int  # loss-and-gradient evaluations
    grad_norm: float  # max-norm of the gradient at the answer
    stop_reason: str  # the optimizer's own account of why it stopped


def recovery_checks(fit: Fit) -> dict[str, Scalar]:
    slope_error = relative_error(fit.slope, TRUE_SLOPE)
    offset_error = relative_error(fit.offset, TRUE_OFFSET)
    return {
        "slope_rel_error": slope_error,
        "offset_rel_error": offset_error,
        "slope_within_5pct": slope_error <= SLOPE_TOLERANCE,
        "offset_within_10pct": offset_error <= OFFSET_TOLERANCE,
        "recovered": slope_error <= SLOPE_TOLERANCE and offset_error <= OFFSET_TOLERANCE,
    }


def solve_judgement(backend: str, fit: Fit, timing: Measurement, exact: tuple[float, float], tol: float,
                    length: int) -> Judgement:
    """What a `solve_*` record holds besides its timing: the fit in metrics, the checks; a fit that misses
    (1.5, 3) is a failure (raised by the core after recording), a fit that stopped short of `tol` a note.

    The first solve is timed apart (`first_call_s`): JAX compiles there, and
    PyTorch's first optimizer imports torch._dynamo (about 1 s on 2 cores).
    """
    checks = recovery_checks(fit)
    checks.update(
        exact_slope=exact[0],
        exact_offset=exact[1],
        # How far the optimizer stopped from the closed-form minimiser.
        gap_to_exact=max(relative_error(fit.slope, exact[0]), relative_error(fit.offset, exact[1])),
        converged=fit.grad_norm <= tol,
    )
    metrics: dict[str, Scalar] = {
        "method": fit.method,
        "slope": fit.slope,
        "offset": fit.offset,
        "final_loss": fit.loss,
        "iterations": fit.iterations,
        "function_evals": fit.evaluations,
        "per_eval_s": timing.median_s / max(fit.evaluations, 1),
        "grad_norm": fit.grad_norm,
        "stop_reason": fit.stop_reason,
    }
    notes = [] if checks["converged"] else [
        f"[yellow]{backend}: not converged: gradient max-norm {fit.grad_norm:.2g} > tol {tol:g} "
        f"after {fit.iterations} iterations ({fit.stop_reason})[/]"
    ]
    missed = recovery_failure(fit, exact, tol, length)
    return Judgement(checks=checks, metrics=metrics, failures=[missed] if missed else [], notes=notes)


def recovery_failure(fit: Fit, exact: tuple[float, float], tol: float, length: int) -> str | None:
    """Why the fit misses (1.5, 3), or None when it does not.

    The message says whose fault it is: the optimizer (it stopped early) or
    the data (even the exact minimiser of the loss is out of range).
    """
    checks = recovery_checks(fit)
    if checks["recovered"]:
        return None
    if fit.grad_norm > tol:
        cause = f"the optimizer did not converge ({fit.stop_reason})"
    else:
        cause = f"with {length} samples the noise dominates: try a longer --array-length"
    return (
        f"recovered slope {fit.slope:.4f} is {checks['slope_rel_error']:.1%} from {TRUE_SLOPE} "
        f"(allowed {SLOPE_TOLERANCE:.0%}), offset {fit.offset:.4f} is {checks['offset_rel_error']:.1%} "
        f"from {TRUE_OFFSET:g} (allowed {OFFSET_TOLERANCE:.0%}); the loss's exact minimiser is "
        f"({exact[0]:.4f}, {exact[1]:.4f}); {cause}"
    )


def solve_records(records: Sequence[Record]) -> list[Record]:
    return [r for r in records if r.case.startswith("solve_") and "slope" in r.metrics]


def _number(value: Scalar) -> float:
    return float(value) if isinstance(value, (int, float)) else float("nan")


def _fit_rows(rec: Record) -> dict[str, str]:
    m, c = rec.metrics, rec.checks
    return {
        "method": str(m["method"]),
        "slope": f"{_number(m['slope']):.6f}",
        "offset": f"{_number(m['offset']):.6f}",
        "final loss (RMSE)": f"{_number(m['final_loss']):.6f}",
        "iterations": str(m["iterations"]),
        "function evaluations": str(m["function_evals"]),
        "solve (median)": format_seconds(rec.median_s or 0.0),
        "per evaluation": format_seconds(_number(m["per_eval_s"])),
        "first solve": format_seconds(_number(m["first_call_s"])),
        "compile": "—" if rec.compile_s is None else format_seconds(rec.compile_s),
        "gap to exact minimiser": f"{_number(c['gap_to_exact']):.1e}",
    }


def fit_table(records: Sequence[Record]) -> Table:
    """The fits side by side: one column per backend, one row per figure."""
    solves = solve_records(records)
    table = Table(title="calibration fit (true slope 1.5, offset 3)", title_justify="left")
    table.add_column("")
    for rec in solves:
        table.add_column(rec.backend, justify="right")
    columns = [_fit_rows(rec) for rec in solves]
    for row in columns[0] if columns else {}:
        table.add_row(row, *(column[row] for column in columns))
    return table


def exact_minimiser_line(records: Sequence[Record]) -> str:
    """The closed-form answer the optimizers are chasing (same data for every backend)."""
    solves = solve_records(records)
    if not solves:
        return ""
    slope, offset = _number(solves[0].checks["exact_slope"]), _number(solves[0].checks["exact_offset"])
    return (
        f"exact minimiser of the loss (least squares of A on B): slope {slope:.6f}, offset {offset:.6f}; "
        "not (1.5, 3) because the noise is in B while the loss measures residuals in A"
    )
