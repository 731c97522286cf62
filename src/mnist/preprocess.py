"""`mnist preprocess-images`: load the data set and show what training will see."""

from __future__ import annotations

from src.core.harness import Suite
from src.mnist.cases import data_suite
from src.mnist.settings import DataSettings


def suites(settings: DataSettings) -> list[Suite]:
    return [data_suite(settings, "data")]
