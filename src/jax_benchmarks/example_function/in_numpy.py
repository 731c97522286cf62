"""f(x) = 0.2·x + sin(x) + cos(2x) in NumPy: the baseline, and the float64 reference the others are checked against."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def f(x: NDArray[np.floating]) -> NDArray[np.floating]:
    y: NDArray[np.floating] = 0.2 * x + np.sin(x) + np.cos(2 * x)
    return y
