"""The XLA flags `mnist flax|all` sets on CPU, as plain strings (no JAX import here).

XLA reads XLA_FLAGS once, when JAX starts its CPU backend, so the CLI must set
them before the flax backend is imported; the backend reads back what is in
effect to label its records.

- `--devices N|all` splits the host into N XLA devices, one per core.
- `--xla-cpu-conv xla` (the default) keeps the YNNPACK library that ships in
  jaxlib for dot products only, so convolutions run on XLA's own (Eigen)
  kernels. jaxlib 0.10.2 also hands convolutions to YNNPACK by default, and
  its convolution gradients made this CNN's train step several times slower
  here (`benchmarks/mnist_cpu.py` prints both).
"""

from __future__ import annotations

import re

HOST_DEVICES = "--xla_force_host_platform_device_count"
YNNPACK_OPS = "--xla_cpu_experimental_ynn_fusion_type"
DOTS_ONLY = "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT"
CONVOLUTIONS = "LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION"


def cpu_flags(devices: int, conv: str) -> dict[str, str | None]:
    """Flag → value to set (None: remove it, leaving jaxlib's default) for a CPU run on `devices` host devices."""
    return {
        HOST_DEVICES: str(devices) if devices > 1 else None,
        YNNPACK_OPS: DOTS_ONLY if conv == "xla" else None,
    }


def merged(existing: str, flags: dict[str, str | None]) -> str:
    """`existing` XLA_FLAGS with each of `flags` replaced, added or removed; other flags are kept."""
    for name, value in flags.items():
        existing = re.sub(rf"{name}=\S*", "", existing)
        if value is not None:
            existing = f"{existing} {name}={value}"
    return " ".join(existing.split())


def conv_in_effect(xla_flags: str) -> str:
    """Which kernels XLA:CPU runs convolutions on under these XLA_FLAGS: xla, or ynnpack (jaxlib's default)."""
    value = re.search(rf"{YNNPACK_OPS}=(\S*)", xla_flags)
    return "ynnpack" if value is None or CONVOLUTIONS in value.group(1).split(",") else "xla"
