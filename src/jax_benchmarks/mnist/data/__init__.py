"""The mnist data pipeline: hub, local IDX/parquet or embedded digits -> normalized float32 arrays.

Only NumPy is imported here; `datasets`, pyarrow and PIL load when a source needs them.
"""

from jax_benchmarks.mnist.data.arrays import MnistData
from jax_benchmarks.mnist.data.loader import load_data
from jax_benchmarks.mnist.names import DATASETS, SOURCES, DataSource, DatasetName

__all__ = ["DATASETS", "SOURCES", "DataSource", "DatasetName", "MnistData", "load_data"]
