"""Which hardware is present, found without importing any framework.

`--device auto|cpu|gpu|all` is resolved here once; backends then ask their framework's descriptor
(`FrameworkDescriptor.device`, jax_benchmarks.frameworks.descriptors) for the matching device object.
`auto` means the same in every group: the GPU when one is visible, else the CPU. `all` (only where a command times several devices, `MULTI_DEVICE`) times on
every visible device: the CPU, plus the GPU when one is visible.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from typing import Literal

DeviceRequest = Literal["auto", "cpu", "gpu", "all"]
DeviceKind = Literal["cpu", "gpu"]
ONE_DEVICE: tuple[DeviceRequest, ...] = ("auto", "cpu", "gpu")  # what a command timing one device takes
MULTI_DEVICE: tuple[DeviceRequest, ...] = (*ONE_DEVICE, "all")  # ... and one that can time every device


def parse_query_rows(text: str) -> list[list[str]]:
    """Rows of `nvidia-smi --format=csv,noheader`: one per GPU, its values stripped."""
    return [[value.strip() for value in line.split(",")] for line in text.splitlines() if line.strip()]


def query_gpus(*fields: str) -> list[list[str]]:
    """`nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits`: one row per GPU, one value per field
    (e.g. `query_gpus("name")`, `query_gpus("memory.free")` in MiB); empty where nvidia-smi is missing or
    fails. Costs milliseconds and imports nothing."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_query_rows(out)


@functools.cache
def gpu_names() -> tuple[str, ...]:
    """Names of the NVIDIA GPUs visible to this process (empty without one).

    An empty CUDA_VISIBLE_DEVICES hides every GPU, as it does for the frameworks.
    """
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return ()
    return tuple(row[0] for row in query_gpus("name") if row[0])


def gpu_name() -> str | None:
    """The first visible GPU's name, or None."""
    names = gpu_names()
    return names[0] if names else None


def resolve_device(request: DeviceRequest) -> DeviceKind:
    """The one device `--device` names: auto means the GPU when one is visible, else the CPU; `all` is not
    one device (see devices_to_time)."""
    if request == "auto":
        return "gpu" if gpu_names() else "cpu"
    if request == "gpu" and not gpu_names():
        raise ValueError("no GPU visible (nvidia-smi found none); use cpu or auto")
    if request == "all":
        raise ValueError("--device all names every device, not one: use devices_to_time")
    return request


def devices_to_time(request: DeviceRequest) -> tuple[DeviceKind, ...]:
    """The devices a command timing several devices runs on, in order: `all` is every visible device
    (the CPU, plus the GPU when one is visible); auto, cpu or gpu is that one device (see resolve_device)."""
    if request == "all":
        return ("cpu", "gpu") if gpu_names() else ("cpu",)
    return (resolve_device(request),)


def cpu_library_runs(request: DeviceRequest) -> bool:
    """Whether a CPU-only library (NumPy, the autograd engine) runs: on the CPU, as the baseline, for every
    request but `--device gpu`, which asks for GPU figures alone (so with auto on a GPU machine too)."""
    return request != "gpu"


def device_text(request: DeviceRequest) -> str:
    """What `--device` resolves to, for a run's header: `cpu`, `gpu` or `cpu, gpu`."""
    return ", ".join(devices_to_time(request))


def cpu_count() -> int:
    """Cores this process may run on (respects affinity masks, unlike os.cpu_count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
