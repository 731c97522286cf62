"""The classic IDX files (LeCun's format): found in a folder, parsed with one np.frombuffer each.

Layout of an IDX file: a big-endian uint32 magic number (0x00000803 for a 3-D
uint8 array of images, 0x00000801 for 1-D uint8 labels; its low byte is the
number of dimensions), one big-endian uint32 per dimension, then the data.
"""

from __future__ import annotations

import gzip
import math
import sys
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from jax_benchmarks.errors import DataError
from jax_benchmarks.training.data.arrays import RawSplits, checked_split
from jax_benchmarks.measure.memory import format_gib, host_available_bytes

Role = Literal["train-images", "train-labels", "t10k-images", "t10k-labels"]
ROLES: tuple[Role, ...] = ("train-images", "train-labels", "t10k-images", "t10k-labels")
IMAGES_MAGIC = 0x00000803
LABELS_MAGIC = 0x00000801


class IdxFiles(NamedTuple):
    folder: Path
    paths: dict[Role, Path]


def _candidate_names(role: Role) -> list[str]:
    """`train-images-idx3-ubyte` and `train-images.idx3-ubyte`, plain or gzipped."""
    kind = "idx3" if role.endswith("images") else "idx1"
    bases = [f"{role}-{kind}-ubyte", f"{role}.{kind}-ubyte"]
    return [name for base in bases for name in (base, f"{base}.gz")]


def find_idx_files(folder: Path) -> IdxFiles | None:
    """The four IDX files in `folder`; None if there are none; DataError if some are missing."""
    found: dict[Role, Path] = {}
    for role in ROLES:
        for name in _candidate_names(role):
            if (folder / name).is_file():
                found[role] = folder / name
                break
    if not found:
        return None
    missing = [f"{role}-{'idx3' if role.endswith('images') else 'idx1'}-ubyte[.gz]" for role in ROLES
               if role not in found]
    if missing:
        raise DataError(f"incomplete IDX files in {folder}: missing {', '.join(missing)}")
    return IdxFiles(folder, found)


CHUNK = 1 << 22  # read data in 4 MiB pieces: a hostile header never sizes an allocation


def header_shape(header: bytes, expected_magic: int, where: str) -> tuple[int, ...]:
    """The shape an IDX header declares (checked: magic number, complete header)."""
    if len(header) < 4:
        raise DataError(f"{where}: truncated IDX file ({len(header)} bytes, no header)")
    magic = int.from_bytes(header[:4], "big")
    if magic != expected_magic:
        raise DataError(f"{where}: wrong IDX magic number 0x{magic:08x}, expected 0x{expected_magic:08x}")
    ndim = expected_magic & 0xFF
    size = 4 + 4 * ndim
    if len(header) < size:
        raise DataError(f"{where}: truncated IDX header ({len(header)} of {size} bytes)")
    return tuple(int.from_bytes(header[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))


# Host bytes per declared data byte: the decoded uint8 array and, for images, their normalized float32 copy.
HOST_BYTES_PER_BYTE = 1 + 4


def memory_problem(count: int, available: int | None, where: str) -> str | None:
    """Why `count` declared data bytes cannot be decoded in the host memory there is (None: they can)."""
    need = count * HOST_BYTES_PER_BYTE
    if available is None or need <= available:
        return None
    return (f"{where}: the IDX header declares {count:,} bytes of data, {format_gib(need)} in memory once decoded "
            f"and normalized, and {format_gib(available)} is free on this host; refused before reading it")


def _check_size(shape: tuple[int, ...], available: int, where: str) -> int:
    """The data size the header declares (Python ints: no overflow), against the bytes there are."""
    count = math.prod(shape)
    if available < count:
        raise DataError(f"{where}: truncated IDX file: {available:,} data bytes for shape {shape} ({count:,})")
    if available > count:
        raise DataError(f"{where}: {available - count:,} unexpected bytes after the data of shape {shape}")
    return count


def parse_idx(data: bytes, expected_magic: int, where: str) -> npt.NDArray[np.uint8]:
    """One IDX array as a read-only view of `data` (no copy)."""
    shape = header_shape(data[: 4 + 4 * (expected_magic & 0xFF)], expected_magic, where)
    header = 4 + 4 * len(shape)
    count = _check_size(shape, len(data) - header, where)
    return np.frombuffer(data, dtype=np.uint8, count=count, offset=header).reshape(shape)


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


def _read_at_most(fh: Readable, limit: int) -> bytes:
    """Up to `limit` bytes, read in pieces (one read(limit) would allocate `limit` bytes up front)."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        part = fh.read(min(CHUNK, left))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _inflate_at_most(compressed: bytes, limit: int, where: str) -> bytes:
    """The gzip data of `compressed`, at most `limit` bytes of it (every member; CRC checked by zlib).

    One `decompressobj(...).decompress(data, limit)` call: zlib grows its output block by block as it
    inflates and stops at `limit`, so a lying header never sizes an allocation; compared with reading
    a `gzip.GzipFile` in pieces, there is no Python loop, no separate CRC pass and no join of the pieces.
    """
    out = b""
    rest = compressed
    while rest and len(out) < limit:
        inflater = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer around deflate data
        out += inflater.decompress(rest, min(limit - len(out), sys.maxsize))  # a C ssize_t
        if len(out) >= limit:
            break
        if not inflater.eof:
            raise DataError(f"{where}: truncated or corrupt gzip data (ends before the gzip trailer)")
        rest = inflater.unused_data  # a further gzip member, as `gzip` reads them
    return out


def refuse_beyond_memory(shape: tuple[int, ...], where: str) -> None:
    problem = memory_problem(math.prod(shape), host_available_bytes(), where)
    if problem is not None:
        raise DataError(problem)


def _read_role(path: Path, role: Role) -> npt.NDArray[np.uint8]:
    """Read the header first and check the size it declares against the file before reading the data."""
    magic = IMAGES_MAGIC if role.endswith("images") else LABELS_MAGIC
    where = str(path)
    header_size = 4 + 4 * (magic & 0xFF)
    gz = path.suffix == ".gz"
    offset = 0  # where the data starts in `data`
    try:
        if gz:
            compressed = path.read_bytes()  # the file's own size: not declared by its contents
            shape = header_shape(_inflate_at_most(compressed, header_size, where), magic, where)
            refuse_beyond_memory(shape, where)
            # One byte more than declared, so that extra data is seen without inflating it all.
            data = _inflate_at_most(compressed, header_size + math.prod(shape) + 1, where)
            offset = header_size
        else:
            with path.open("rb") as fh:
                header = fh.read(header_size)
                shape = header_shape(header, magic, where)
                # The size is known without reading: refuse a lying header before any allocation.
                _check_size(shape, path.stat().st_size - header_size, where)
                # A header and a (sparse) file can agree on more data than this host holds.
                refuse_beyond_memory(shape, where)
                data = _read_at_most(fh, math.prod(shape) + 1)
    except (OSError, EOFError, zlib.error) as exc:
        if gz:
            raise DataError(f"{path}: truncated or corrupt gzip data ({exc})") from None
        raise DataError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    available = len(data) - offset
    if gz and available > math.prod(shape):
        raise DataError(f"{where}: unexpected bytes after the data of shape {shape} (more than the header declares)")
    count = _check_size(shape, available, where)
    return np.frombuffer(data, dtype=np.uint8, count=count, offset=offset).reshape(shape)


def read_idx_files(files: IdxFiles) -> RawSplits:
    """Decode the four files; gzip inflation releases the GIL, so they are read in parallel."""
    with ThreadPoolExecutor(max_workers=len(ROLES)) as pool:
        arrays = dict(zip(ROLES, pool.map(lambda role: _read_role(files.paths[role], role), ROLES)))
    x_train, y_train = checked_split(arrays["train-images"], arrays["train-labels"], f"IDX train set in {files.folder}")
    x_test, y_test = checked_split(arrays["t10k-images"], arrays["t10k-labels"], f"IDX test set in {files.folder}")
    return RawSplits(x_train, y_train, x_test, y_test)


def idx_bytes(array: npt.NDArray[np.uint8]) -> bytes:
    """`array` in IDX format (used to write fixtures and benchmark files)."""
    magic = IMAGES_MAGIC if array.ndim == 3 else LABELS_MAGIC
    if array.ndim not in (1, 3):
        raise ValueError("IDX writer handles 1-D labels and 3-D images only")
    header = magic.to_bytes(4, "big") + np.asarray(array.shape, dtype=">u4").tobytes()
    return header + np.ascontiguousarray(array, dtype=np.uint8).tobytes()


def write_idx_files(folder: Path, raw: RawSplits, *, gz: bool = False, dotted: bool = False) -> dict[Role, Path]:
    """Write `raw` as the four IDX files (`train-images-idx3-ubyte` or, `dotted`, `train-images.idx3-ubyte`)."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays: dict[Role, npt.NDArray[np.uint8]] = {
        "train-images": raw.x_train, "train-labels": raw.y_train.astype(np.uint8),
        "t10k-images": raw.x_test, "t10k-labels": raw.y_test.astype(np.uint8),
    }
    paths: dict[Role, Path] = {}
    for role, array in arrays.items():
        kind = "idx3" if role.endswith("images") else "idx1"
        name = f"{role}{'.' if dotted else '-'}{kind}-ubyte{'.gz' if gz else ''}"
        data = idx_bytes(array)
        # compresslevel 6 and mtime 0: like the published files' ratio, reproducible bytes.
        paths[role] = folder / name
        paths[role].write_bytes(gzip.compress(data, compresslevel=6, mtime=0) if gz else data)
    return paths
