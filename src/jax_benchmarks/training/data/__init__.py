"""The MNIST data pipeline: hub, local IDX/parquet or embedded digits -> normalized float32 arrays.

Only NumPy is imported here; `datasets`, pyarrow and PIL load when a source needs them.
"""

from jax_benchmarks.training.data.arrays import MnistData
from jax_benchmarks.training.data.loader import load_data
from jax_benchmarks.training.names import DATASETS, SOURCES, DataSource, DatasetName

__all__ = ["DATASETS", "SOURCES", "DataSource", "DatasetName", "MnistData", "load_data"]
