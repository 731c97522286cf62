"""Which hardware is present, found without importing any framework.

`--device auto|cpu|gpu` is resolved here once; backends then ask for the
matching JAX or PyTorch device object.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import jax
    import torch

DeviceRequest = Literal["auto", "cpu", "gpu"]
DeviceKind = Literal["cpu", "gpu"]


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
    """Map `--device` onto the hardware: auto means the GPU when one is visible."""
    if request == "auto":
        return "gpu" if gpu_names() else "cpu"
    if request == "gpu" and not gpu_names():
        raise ValueError("no GPU visible (nvidia-smi found none); use cpu or auto")
    return request


def devices_to_time(request: DeviceRequest) -> tuple[DeviceKind, ...]:
    """`--device auto` times on every visible device (CPU, plus the GPU when one is
    visible); `cpu` or `gpu` narrows it to that one."""
    if request == "auto":
        return ("cpu", "gpu") if gpu_names() else ("cpu",)
    return (resolve_device(request),)


def cpu_count() -> int:
    """Cores this process may run on (respects affinity masks, unlike os.cpu_count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


def jax_device(kind: DeviceKind) -> jax.Device:
    """The first JAX device of the kind; explains the fix when JAX cannot see the GPU."""
    import jax

    if kind == "gpu":
        try:
            return jax.devices("gpu")[0]
        except RuntimeError as exc:
            raise RuntimeError(
                "a GPU is visible but JAX cannot use it: install the CUDA plugin "
                "(`pip install -U 'jax[cuda13]'`, which ./cli.sh does when nvidia-smi works)"
            ) from exc
    return jax.devices("cpu")[0]


def torch_device(kind: DeviceKind) -> torch.device:
    """The PyTorch device of the kind; explains the fix when torch is a CPU build."""
    import torch

    if kind == "gpu":
        if not torch.cuda.is_available():
            raise RuntimeError(
                "a GPU is visible but PyTorch cannot use it: this torch is a CPU build "
                f"({torch.__version__}); reinstall torch with CUDA support"
            )
        return torch.device("cuda")
    return torch.device("cpu")
