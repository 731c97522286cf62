"""The calibration fit's two cases, declared once for every backend.

Each backend gives its framework's parts (`Calibration`): how its inputs are made from the shared
sensor data, the timed solve and how its result reads as a `Fit`, the timed loss evaluation. The
sequence is the same for all: `solve_{length}_float64` (the whole solve from (1, 0), timed by
`measure`; its last result is the recorded fit), then `loss_eval_{length}_float64` (one loss
evaluation at the start point). A fit that misses (1.5, 3) fails the run once both are recorded.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed, no_judgement
from jax_benchmarks.run import Run
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.scipy.data import DTYPE, SensorData, case_name, exact_minimiser, make_sensor_data
from jax_benchmarks.scipy.fit import Fit, solve_judgement
from jax_benchmarks.scipy.settings import ScipySettings

InputsT = TypeVar("InputsT")


@dataclass(frozen=True)
class Calibration(Generic[InputsT]):
    """One backend's parts of the fit; every callable gets the backend's inputs, made once, untimed."""

    backend: str
    device: str
    params: dict[str, Any]
    solver: str  # how the fit's log line names the optimizer
    inputs: Callable[[SensorData], InputsT]  # the sensor data in the framework, on the device
    solve: Callable[[InputsT], Timed[Any]]
    to_fit: Callable[[InputsT, Any], Fit]  # untimed: the last solve's result as a Fit
    loss: Callable[[InputsT], Timed[Any]]
    judge_loss: Callable[[InputsT, Any, Measurement], Judgement] = lambda _i, r, m: no_judgement(r, m)
    compiled: bool = False  # JAX: the first solve and the first loss call trace and compile
    first_solve: str = ""  # what the first solve includes besides the work, e.g. " (trace + compile)"
    before: Callable[[Run], None] | None = None
    context: Callable[[], AbstractContextManager[object]] = field(default=nullcontext)


def calibration_suite(settings: ScipySettings, parts: Calibration[InputsT]) -> Suite:
    """The two cases on the backend's device; the data is made when the first selected case needs it."""
    tol, length = settings.tol, settings.array_length

    @functools.cache
    def data() -> SensorData:
        return make_sensor_data(length, settings.seed)

    @functools.cache
    def inputs() -> InputsT:
        return parts.inputs(data())

    def judge_solve(result: Any, timing: Measurement) -> Judgement:
        fit = parts.to_fit(inputs(), result)
        judgement = solve_judgement(parts.backend, fit, timing, exact_minimiser(data()), tol, length)
        found = (
            f"{parts.solver}: slope {fit.slope:.6f}, offset {fit.offset:.6f} in {fit.iterations} iterations, "
            f"{fit.evaluations} evaluations; first solve {timing.first_call_s or 0.0:.3g} s{parts.first_solve}, "
            f"then {timing.median_s:.3g} s"
        )
        return dataclasses.replace(judgement, notes=[*judgement.notes, found])

    def case(op: str, prepare: Callable[[], Timed[Any]], judge: Callable[[Any, Measurement], Judgement]) -> Case[Any]:
        return Case(case_name(op, length), prepare, judge, dtype=DTYPE, params=parts.params,
                    compiled=parts.compiled)

    return Suite(
        Target(parts.backend, parts.device),
        [
            # Every solve starts from (1, 0) on the same data, so the last timed solve is the fit.
            case("solve", lambda: parts.solve(inputs()), judge_solve),
            case("loss_eval", lambda: parts.loss(inputs()), lambda r, m: parts.judge_loss(inputs(), r, m)),
        ],
        before=parts.before, context=parts.context,
    )
