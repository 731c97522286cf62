"""The XLA flags `mnist flax|all` and `autograd jax|all` set on CPU, as plain strings (no JAX import here).

XLA reads XLA_FLAGS once, when JAX starts its CPU backend, so the CLI must set
them before a JAX backend is imported (`set_before_jax`); the backend reads back
what is in effect to label its records.

- `--devices N|all` (mnist) splits the host into N XLA devices, one per core.
- `--xla-cpu-conv xla` (the default) keeps the YNNPACK library that ships in
  jaxlib for dot products only, so convolutions run on XLA's own (Eigen)
  kernels. jaxlib 0.10.2 also hands convolutions to YNNPACK by default, and
  its convolution gradients made the mnist CNN's train step several times slower
  here (`benchmarks/mnist_cpu.py` prints both).
"""

from __future__ import annotations

import re
import sys
from collections.abc import MutableMapping
from typing import Any, Literal

from pydantic import Field

HOST_DEVICES = "--xla_force_host_platform_device_count"
YNNPACK_OPS = "--xla_cpu_experimental_ynn_fusion_type"
DOTS_ONLY = "LIBRARY_FUSION_TYPE_INDIVIDUAL_DOT"
CONVOLUTIONS = "LIBRARY_FUSION_TYPE_INDIVIDUAL_CONVOLUTION"

CpuConv = Literal["xla", "ynnpack"]

# What each flag does, said when it is set ({value}: the flag's value).
FLAG_REASONS = {
    HOST_DEVICES: "the CPU is split into {value} XLA devices (one per core) for data-parallel training",
    YNNPACK_OPS: "YNNPACK runs dot products only, convolutions run on XLA's own kernels "
    "(--xla-cpu-conv ynnpack: jaxlib's default)",
}


def cpu_conv_field() -> Any:
    """The `--xla-cpu-conv` option of every command that runs a JAX convolution on CPU."""
    return Field(
        "xla",
        description="Flax on CPU: convolutions on XLA's own kernels (default; an XLA flag set before JAX is "
        "imported keeps YNNPACK for dot products only) or on YNNPACK (jaxlib's default).",
    )


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


def conv_in_effect(xla_flags: str) -> CpuConv:
    """Which kernels XLA:CPU runs convolutions on under these XLA_FLAGS: xla, or ynnpack (jaxlib's default)."""
    value = re.search(rf"{YNNPACK_OPS}=(\S*)", xla_flags)
    return "ynnpack" if value is None or CONVOLUTIONS in value.group(1).split(",") else "xla"


def set_before_jax(conv: CpuConv, devices: int, environ: MutableMapping[str, str]) -> tuple[CpuConv, list[str]]:
    """Put the flags of a CPU run on `devices` host devices with convolutions on `conv` into `environ`'s
    XLA_FLAGS (the user's other flags kept); returns the kernels in effect and a note per flag set.

    XLA reads XLA_FLAGS once, when JAX starts: where JAX is already loaded (a second command in one process)
    nothing is changed, and the kernels in effect are those the flags it started with say."""
    if "jax" in sys.modules:
        return conv_in_effect(environ.get("XLA_FLAGS", "")), []
    flags = cpu_flags(devices, conv)
    environ["XLA_FLAGS"] = merged(environ.get("XLA_FLAGS", ""), flags)
    return conv, [f"XLA_FLAGS={name}={value} set before importing JAX: {FLAG_REASONS[name].format(value=value)}"
                  for name, value in flags.items() if value is not None]
