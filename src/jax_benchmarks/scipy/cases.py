"""The calibration fit's two cases, declared once for every backend.

Each backend gives its framework's parts (`Calibration`): how its inputs are made from the shared
sensor data, the timed solve and how its result reads as a `Fit`, the timed loss evaluation. The
sequence is the same for all: `solve_{length}_float64` (the whole solve from (1, 0), timed by
`measure`; its last result is the recorded fit), then `loss_eval_{length}_float64` (one loss
evaluation at the start point) and, for JAX, `loss_eval_{length/2}_float64` (the same jitted loss on
half the samples: a new shape, compiled again). A fit that misses (1.5, 3) fails the run once every
case is recorded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from jax_benchmarks.measure.agreement import Computed
from jax_benchmarks.measure.harness import Case, Fixture, Judgement, no_judgement, Recorder, Suite, Target, Timed
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.scipy.data import DTYPE, SensorData, case_name, exact_minimiser, make_sensor_data
from jax_benchmarks.scipy.fit import Fit, solve_judgement
from jax_benchmarks.scipy.settings import ScipySettings

InputsT = TypeVar("InputsT")
AGREEMENT = "scipy fit"  # the kind of values `scipy all` compares across backends


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
    judge_loss: Callable[[Any, Measurement, InputsT], Judgement] = no_judgement
    # JAX: the loss on an input of half the length, which must compile again (a third case).
    new_shape_loss: Callable[[InputsT], Timed[Any]] | None = None
    judge_new_shape_loss: Callable[[Any, Measurement, InputsT], Judgement] = no_judgement
    compiled: bool = False  # JAX: the first solve and the first loss call trace and compile
    first_solve: str = ""  # what the first solve includes besides the work, e.g. " (trace + compile)"
    before: Callable[[Recorder], None] | None = None
    context: Callable[[], AbstractContextManager[object]] = field(default=nullcontext)


def calibration_suite(settings: ScipySettings, parts: Calibration[InputsT]) -> Suite:
    """The cases on the backend's device; the sensor data and the backend's inputs made from it are the
    suite's fixtures, made when the first selected case needs them."""
    tol, length = settings.tol, settings.array_length
    data: Fixture[SensorData] = Fixture("sensor data", lambda: make_sensor_data(length, settings.seed))
    inputs: Fixture[InputsT] = Fixture(f"{parts.backend} inputs", parts.inputs, needs=(data,))

    def judge_solve(result: Any, timing: Measurement, sensors: SensorData, on_device: InputsT) -> Judgement:
        fit = parts.to_fit(on_device, result)
        judgement = solve_judgement(parts.backend, fit, timing, exact_minimiser(sensors), tol, length)
        found = (
            f"{parts.solver}: slope {fit.slope:.6f}, offset {fit.offset:.6f} in {fit.iterations} iterations, "
            f"{fit.evaluations} evaluations; first solve {timing.first_call_s or 0.0:.3g} s{parts.first_solve}, "
            f"then {timing.median_s:.3g} s"
        )
        return dataclasses.replace(judgement, notes=[*judgement.notes, found],
                                   output=Computed(AGREEMENT, {"slope": [fit.slope], "offset": [fit.offset]}))

    def case(op: str, prepare: Callable[..., Timed[Any]], judge: Callable[..., Judgement],
             uses: tuple[Fixture[Any], ...], at_length: int = length, **params: Any) -> Case[Any]:
        return Case(case_name(op, at_length), prepare, judge, dtype=DTYPE, params={**parts.params, **params},
                    compiled=parts.compiled, uses=uses)

    cases = [
        # Every solve starts from (1, 0) on the same data, so the last timed solve is the fit.
        case("solve", lambda _sensors, on_device: parts.solve(on_device), judge_solve, (data, inputs)),
        case("loss_eval", parts.loss, parts.judge_loss, (inputs,)),
    ]
    if parts.new_shape_loss is not None:
        half = length // 2
        cases.append(case("loss_eval", parts.new_shape_loss, parts.judge_new_shape_loss, (inputs,),
                          at_length=half, input_length=half))
    return Suite(Target(parts.backend, parts.device), cases, before=parts.before, context=parts.context,
                 fixtures=[data, inputs])
