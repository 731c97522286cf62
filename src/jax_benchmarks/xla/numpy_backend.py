"""xla workload in NumPy (BLAS/LAPACK on the host CPU): the reference backend."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numpy.typing import NDArray

from jax_benchmarks.frameworks.arrays import cpu_only_suites
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.xla.settings import XlaSettings
from jax_benchmarks.xla.workload import LinalgOps, workload_suite

Matrix = NDArray[np.floating[Any]]
Number = np.floating[Any]


class NumpyOps(LinalgOps[Matrix, Number]):
    name = "numpy"

    def __init__(self, settings: XlaSettings) -> None:
        super().__init__(settings)
        self.np_dtype = np.dtype(settings.dtype)

    @property
    def rng(self) -> str:
        return "numpy.random.Generator(PCG64)"

    @functools.cached_property
    def seeds(self) -> list[int]:
        """One seed per matrix, drawn from --seed: every call regenerates the same pair."""
        return [int(s) for s in RNG_Provider(self.seed).numpy.integers(0, 2**63, size=2)]

    def uniform_pair(self) -> tuple[Matrix, Matrix]:
        a, b = (np.random.default_rng(s).random((self.n, self.n), dtype=self.np_dtype) for s in self.seeds)
        return a, b

    def means(self, a: Matrix, b: Matrix) -> tuple[Number, Number]:
        return a.mean(), b.mean()

    def sums(self, a: Matrix, b: Matrix) -> tuple[Number, Number]:
        return a.sum(), b.sum()

    def matmul(self, a: Matrix, b: Matrix) -> Matrix:
        return a @ b

    def mean(self, x: Matrix) -> Number:
        mean: Number = x.mean()
        return mean

    def inverse(self, c: Matrix) -> Matrix:
        return np.linalg.inv(c)

    def residual(self, c: Matrix, c_inv: Matrix) -> Number:
        product = c @ c_inv
        # In place: C·C⁻¹ − I and its absolute value need no further N×N temporaries.
        product.flat[:: self.n + 1] -= 1
        np.abs(product, out=product)
        largest: Number = product.max()
        return largest

    def to_float(self, x: Number) -> float:
        return float(x)

    def dtype_of(self, x: Matrix) -> str:
        return str(x.dtype)


def suites(settings: XlaSettings) -> list[Suite]:
    on_cpu = settings.model_copy(update={"device": "cpu"})
    return cpu_only_suites(NumpyOps.name, "NumPy", settings.device, lambda: [workload_suite(NumpyOps(on_cpu), on_cpu)])
