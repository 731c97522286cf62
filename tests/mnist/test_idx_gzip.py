"""Gzipped IDX files are inflated in one zlib call: every member, CRC checked, truncation refused."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from jax_benchmarks.errors import DataError
from jax_benchmarks.training.data.idx import _read_role, idx_bytes


def test_multi_member_gzip_reads_like_gzip_and_bad_files_are_refused(tmp_path: Path) -> None:
    labels = np.arange(1000, dtype=np.uint8) % 10
    data = idx_bytes(labels)
    path = tmp_path / "train-labels-idx1-ubyte.gz"
    # two gzip members, split inside the data: `gzip` reads them as one stream, and so must we
    path.write_bytes(gzip.compress(data[:500], mtime=0) + gzip.compress(data[500:], mtime=0))
    assert gzip.decompress(path.read_bytes()) == data
    np.testing.assert_array_equal(_read_role(path, "train-labels"), labels)

    whole = gzip.compress(data, mtime=0)
    path.write_bytes(whole[:-20])  # truncated: no trailer, part of the data missing
    with pytest.raises(DataError, match="truncated"):
        _read_role(path, "train-labels")
    corrupt = bytearray(whole)
    corrupt[-8] ^= 0xFF  # the CRC32 in the trailer no longer matches the data
    path.write_bytes(bytes(corrupt))
    with pytest.raises(DataError, match="corrupt gzip data"):
        _read_role(path, "train-labels")
    path.write_bytes(whole + gzip.compress(b"\x00" * 10, mtime=0))  # more data than the header declares
    with pytest.raises(DataError, match="unexpected bytes after the data"):
        _read_role(path, "train-labels")
