"""`mnist preprocess-images`: load the data set and show what training will see."""

from __future__ import annotations

from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.mnist.cases import data_suite
from jax_benchmarks.training.settings import DataSettings


def suites(settings: DataSettings) -> list[Suite]:
    return [data_suite(settings, "data")]
