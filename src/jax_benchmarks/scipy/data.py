"""The sensor-calibration data, generated with NumPy from `--seed`.

Every backend builds the same float64 arrays here (NumPy, same seed) and
converts them; none draws its own with JAX's or PyTorch's RNG, so the fits
can be compared to 1e-3.

Sensor B is sensor A seen through a noisy calibration:
    A = sin(t) + 1 + t/10 + N(0, 0.3)
    B = A * N(1.5, 0.1) + N(3, 0.1)      (a fresh draw per sample)
and the loss asks which (slope, offset) map B back onto A:
    rmse_with_calibration(slope, offset) = sqrt(mean((A - (B - offset) / slope)^2)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.scipy.fit import TRUE_OFFSET, TRUE_SLOPE

START = (1.0, 0.0)
# SciPy's own BFGS default (200 x number of parameters), used by every backend.
MAX_ITER = 400
DTYPE = "float64"

Array = NDArray[np.float64]


@dataclass(frozen=True)
class SensorData:
    timestamps: Array
    sensor_a: Array
    sensor_b: Array

    @property
    def length(self) -> int:
        return int(self.timestamps.shape[0])


def make_sensor_data(
    length: int,
    seed: int,
    *,
    noise_a: float = 0.3,
    slope_sd: float = 0.1,
    offset_sd: float = 0.1,
) -> SensorData:
    """The two sensors' readings for `length` timestamps, reproducible from `seed`.

    The noise levels define the calibration problem (σ 0.3 on A, σ 0.1 on B's
    slope and offset); they are parameters only so that the
    tests can show where the fit's bias comes from (see `exact_minimiser`).
    """
    rng = RNG_Provider(seed).numpy
    timestamps = np.linspace(0.0, 100.0, length)
    sensor_a = np.sin(timestamps) + 1.0 + timestamps / 10.0 + rng.normal(0.0, noise_a, length)
    sensor_b = sensor_a * rng.normal(TRUE_SLOPE, slope_sd, length) + rng.normal(TRUE_OFFSET, offset_sd, length)
    return SensorData(timestamps, sensor_a, sensor_b)


def exact_minimiser(data: SensorData) -> tuple[float, float]:
    """The loss's exact minimiser, in closed form.

    A - (B - offset)/slope = A - (B/slope - offset/slope) is linear in
    (1/slope, offset/slope), so minimising the RMSE is ordinary least squares
    of A on B: A ~ beta*B + alpha, hence slope = 1/beta and offset = -alpha/beta.
    It tells whether an optimizer converged, independently of the optimizers.

    Why it is near (1.53, 2.80) and not (1.5, 3): the loss measures residuals
    in A, i.e. it regresses A on B, so B plays the error-free regressor - but
    B carries the noise (A*N(0, 0.1) + N(0, 0.1), variance about
    0.01*E[A^2] + 0.01 = 0.46). Noise in the regressor attenuates the fitted
    coefficient 1/slope (errors-in-variables), so the slope comes out inflated,
    1.5 + var(noise_B) / (1.5 var(A)) = 1.5 + 0.46/(1.5 * 8.9) = 1.535, and the
    offset, fitted through the means, drops by (slope - 1.5) * mean(A) = 0.035 * 6
    to about 2.79. The N(0, 0.3) noise in A is not the cause: B is computed
    from the noisy A, so that noise is shared signal (without it the fit is
    just as biased; with no noise in B it is exactly (1.5, 3)).
    """
    design = np.column_stack([data.sensor_b, np.ones(data.length)])
    (beta, alpha), *_ = np.linalg.lstsq(design, data.sensor_a, rcond=None)
    return float(1.0 / beta), float(-alpha / beta)


def case_name(op: str, length: int) -> str:
    """Cases are `{op}_{shape}_{dtype}`, e.g. `solve_10000_float64`."""
    return f"{op}_{length}_{DTYPE}"
