"""The mnist data pipeline: hub, local IDX/parquet or embedded digits -> normalized float32 arrays.

Only NumPy is imported here; `datasets`, pyarrow and PIL load when a source needs them.
"""

from src.mnist.data.arrays import MnistData
from src.mnist.data.loader import DATASETS, SOURCES, Dataset, Source, load_data

__all__ = ["DATASETS", "SOURCES", "Dataset", "MnistData", "Source", "load_data"]
