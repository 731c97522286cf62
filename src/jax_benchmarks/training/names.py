"""The names of the data sets and data sources, defined once (settings, the data pipeline and `jit` use them)."""

from __future__ import annotations

from typing import Literal, get_args

DatasetName = Literal["mnist", "fashion_mnist"]
DataSource = Literal["auto", "hub", "local", "embedded"]
DATASETS: tuple[DatasetName, ...] = get_args(DatasetName)
SOURCES: tuple[DataSource, ...] = get_args(DataSource)
