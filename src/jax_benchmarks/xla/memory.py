"""How much memory an `xla` run needs, and how much is free, without importing a framework.

The guard runs inside the settings model, before any matrix exists, so a
size that cannot fit is refused in milliseconds with an estimate instead of
swapping the machine or dying halfway with an out-of-memory error.
"""

from __future__ import annotations

import math

from jax_benchmarks.hardware.devices import DeviceKind, query_gpus
from jax_benchmarks.measure.memory import format_gib, host_available_bytes

# A, B and C = A·B are alive together; the backends free A and B before the
# inverse, so C, C⁻¹ and C·C⁻¹ are again three (plus the solver's workspace).
MATRICES_HELD = 3


def required_bytes(n: int, itemsize: int) -> int:
    """Bytes of the N×N matrices an `xla` run holds at once."""
    return MATRICES_HELD * n * n * itemsize


def largest_size(free: int, itemsize: int) -> int:
    """The largest N whose matrices fit in `free` bytes."""
    return math.isqrt(free // (MATRICES_HELD * itemsize))


def gpu_free_bytes() -> int | None:
    """Free memory of the first GPU (the one JAX and PyTorch use by default), or None when nvidia-smi
    cannot tell."""
    rows = query_gpus("memory.free")  # MiB
    try:
        return int(float(rows[0][0])) * 2**20 if rows else None
    except ValueError:  # e.g. "[N/A]"
        return None


def memory_shortfall(n: int, dtype: str, itemsize: int, device: DeviceKind) -> str | None:
    """Why N×N matrices of `dtype` do not fit, or None when they do.

    Host memory is always checked (NumPy runs there in `xla all`); GPU memory
    as well when the run is on the GPU. Where free memory cannot be read,
    nothing is refused.
    """
    need = required_bytes(n, itemsize)
    pools = [("on the host", host_available_bytes())]
    if device == "gpu":
        pools.append(("on the GPU", gpu_free_bytes()))
    for where, free in pools:
        if free is not None and need > free:
            return (
                f"{n}×{n} {dtype} needs {format_gib(need)} ({MATRICES_HELD} matrices), "
                f"{format_gib(free)} free {where}; largest that fits: {largest_size(free, itemsize)}"
            )
    return None
