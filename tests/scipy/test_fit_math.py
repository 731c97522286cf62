"""The data, the loss, the exact minimiser and the checks (no JAX or PyTorch here)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize  # type: ignore[import-untyped]

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.agreement import Computed
from jax_benchmarks.store.results import Output, Run
from jax_benchmarks.scipy.agreement import check_agreement
from jax_benchmarks.scipy.cases import AGREEMENT
from jax_benchmarks.scipy.data import exact_minimiser, make_sensor_data
from jax_benchmarks.scipy.fit import Fit, recovery_checks, recovery_failure
from jax_benchmarks.scipy.numpy_backend import calibration_loss, calibration_loss_and_grad
from tests.conftest import read_jsonl


def test_the_real_scipy_is_imported_not_the_group_package() -> None:
    import jax_benchmarks.scipy.numpy_backend as backend

    # What the backend's `import scipy.optimize` bound, and what `scipy` means afterwards.
    assert "site-packages" in str(getattr(backend, "scipy").optimize.__file__)
    assert "site-packages" in str(sys.modules["scipy"].__file__)
    assert hasattr(sys.modules["scipy"], "optimize") and not hasattr(sys.modules["scipy"], "cli")


def test_data_is_reproducible_from_the_seed() -> None:
    a, b, other = make_sensor_data(50, 3), make_sensor_data(50, 3), make_sensor_data(50, 4)
    assert a.length == 50
    np.testing.assert_array_equal(a.sensor_b, b.sensor_b)
    assert not np.array_equal(a.sensor_b, other.sensor_b)


def test_analytic_gradient_matches_finite_differences() -> None:
    data = make_sensor_data(200, 0)

    def loss(p: np.ndarray) -> float:
        return calibration_loss(p, data.sensor_a, data.sensor_b)

    def grad(p: np.ndarray) -> np.ndarray:
        return calibration_loss_and_grad(p, data.sensor_a, data.sensor_b)[1]

    for point in ([1.0, 0.0], [1.6, 2.5]):
        assert scipy.optimize.check_grad(loss, grad, np.array(point)) < 1e-5


def test_exact_minimiser_is_a_minimum_of_the_loss() -> None:
    data = make_sensor_data(1000, 0)
    best = np.array(exact_minimiser(data))
    at_best = calibration_loss(best, data.sensor_a, data.sensor_b)
    for step in ([1e-3, 0], [-1e-3, 0], [0, 1e-3], [0, -1e-3]):
        assert calibration_loss(best + np.array(step), data.sensor_a, data.sensor_b) > at_best


def test_bias_comes_from_the_noise_in_b_not_in_a() -> None:
    """Why the fit finds about (1.53, 2.8), not (1.5, 3): the loss measures residuals in A while the noise
    is in B, so the least-squares line of A on B is biased; with no noise in B it is exactly (1.5, 3)."""
    n = 200_000
    biased = exact_minimiser(make_sensor_data(n, 0))
    no_noise_in_a = exact_minimiser(make_sensor_data(n, 0, noise_a=0.0))
    no_noise_in_b = exact_minimiser(make_sensor_data(n, 0, slope_sd=0.0, offset_sd=0.0))
    np.testing.assert_allclose(no_noise_in_b, (1.5, 3.0), rtol=1e-9)
    assert biased[0] > 1.52 and biased[1] < 2.85
    assert no_noise_in_a[0] > 1.52 and no_noise_in_a[1] < 2.85
    # Errors-in-variables prediction: slope = 1.5 + var(noise in B) / (1.5 var(A)).
    data = make_sensor_data(n, 0)
    noise_b_var = 0.1**2 * np.mean(data.sensor_a**2) + 0.1**2
    predicted = 1.5 + noise_b_var / (1.5 * np.var(data.sensor_a))
    assert biased[0] == pytest.approx(predicted, rel=2e-3)


def _fit(slope: float, offset: float) -> Fit:
    return Fit("BFGS", slope, offset, loss=0.4, iterations=10, evaluations=11, grad_norm=1e-5,
               stop_reason="gradient below tolerance")


def test_recovery_checks_limits() -> None:
    assert recovery_checks(_fit(1.57, 2.71))["recovered"]
    assert not recovery_checks(_fit(1.58, 3.0))["slope_within_5pct"]
    assert not recovery_checks(_fit(1.5, 2.69))["offset_within_10pct"]
    missed = recovery_failure(_fit(1.5, 2.5), (1.5, 2.5), 1e-4, 10)
    assert missed is not None and "offset 2.5000 is 16.7% from 3 (allowed 10%)" in missed
    assert recovery_failure(_fit(1.5, 3.0), (1.5, 3.0), 1e-4, 10) is None


def test_failed_recovery_blames_the_optimizer_when_it_stopped_early() -> None:
    stuck = Fit("BFGS", 1.57, 2.48, loss=0.44, iterations=6, evaluations=8, grad_norm=1.5,
                stop_reason="line search failed (status 3)")
    assert "did not converge (line search failed (status 3))" in str(recovery_failure(stuck, (1.59, 2.58), 1e-4, 100))
    assert "noise dominates" in str(recovery_failure(_fit(1.57, 2.48), (1.57, 2.48), 1e-4, 100))


def _solve(run: Run, backend: str, slope: float) -> None:
    """What the harness leaves on the run for one solve case: its record and, next to it, its fit."""
    record = run.record(backend=backend, case="solve_100_float64", device="cpu", dtype="float64",
                        params={"array_length": 100, "seed": 0, "tol": 1e-4}, metrics={"slope": slope, "offset": 2.8})
    run.outputs.append(Output(record, Computed(AGREEMENT, {"slope": [slope], "offset": [2.8]})))


def test_agreement_records_then_fails_naming_the_worst_pair(results_path: Path) -> None:
    run = Run("scipy", results_path)
    _solve(run, "numpy", 1.5)
    _solve(run, "jax", 1.5)
    _solve(run, "pytorch", 1.503)
    with pytest.raises(CheckFailed, match="disagree.*try a smaller --tol"):
        check_agreement(run)
    record = run.records[-1]
    assert (record.backend, record.case) == ("all", "agreement_100_float64")
    assert record.checks["passed"] is False
    assert record.checks["max_rel_diff_slope"] == pytest.approx(0.003 / 1.503)
    assert record.checks["max_rel_diff_offset"] == 0.0
    assert record.checks["slope_pair"] in ("numpy @cpu vs pytorch @cpu", "jax @cpu vs pytorch @cpu")
    assert record.params == {"array_length": 100, "seed": 0, "tol": 1e-4,
                             "compared": ["numpy @cpu", "jax @cpu", "pytorch @cpu"]}
    assert len(read_jsonl(results_path)) == 4  # on disk before the failure


def test_agreement_needs_two_fits(results_path: Path) -> None:
    run = Run("scipy", results_path)
    _solve(run, "numpy", 1.53)
    check_agreement(run)
    assert len(run.records) == 1
