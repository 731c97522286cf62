"""Other processes on the GPU a figure ran on, as nvidia-smi reports them.

A GPU time-slices its engines between the processes that hold a context on it: another process's kernels
on the same device make ours wait, and its memory shrinks what ours may use. nvidia-smi lists the compute
processes of every GPU (`--query-compute-apps=pid,gpu_uuid,used_memory`); the figure's device is the GPU
the framework's first device maps to (CUDA_VISIBLE_DEVICES, where set, names it by index or UUID), and
"others" are the processes on it that are neither this one nor its children.

Never a guess: "contention unknown" for the device where nvidia-smi is missing or fails, where the device
cannot be mapped (a MIG instance, an unknown index), or where the listing does not show this process
although it runs on the GPU (in a container with its own PID namespace nvidia-smi sees no processes, so
"nobody else" would be invented).

The reading is taken once, after the timed calls (one nvidia-smi start a case, the GPUs' ids asked once a
suite: `ids_asked_once`; it never adds to a sample): a process that came and went while the figure was timed is not seen. `gpu_seen` takes the
runner as an argument, so tests inject nvidia-smi's output.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from jax_benchmarks.hardware.devices import parse_query_rows
from jax_benchmarks.store.record import Scalar

# Runs nvidia-smi with these arguments: its standard output, or None where it is missing or failed.
Runner = Callable[[list[str]], str | None]
IDS_QUERY = ["--query-gpu=index,uuid", "--format=csv,noheader"]
APPS_QUERY = ["--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits"]
SMI_TIMEOUT_S = 10


@dataclass(frozen=True)
class GpuSeen:
    """Other processes on one GPU; `unknown` says why they cannot be told."""

    device: int  # the framework's device index
    others: int | None = None  # other compute processes on it
    other_mib: float | None = None  # their memory on it, as nvidia-smi reports it
    unknown: str | None = None

    @property
    def busy(self) -> bool:
        """Another compute process holds a context on the device (its kernels share the engines with ours)."""
        return bool(self.others)

    def sentence(self) -> str:
        if self.unknown is not None or self.others is None:
            return f"GPU {self.device} contention unknown: {self.unknown}"
        memory = f", {self.other_mib:.0f} MiB" if self.other_mib else ""
        return f"{self.others} other process(es) on GPU {self.device}{memory}"

    def as_fields(self) -> dict[str, Scalar]:
        """The record's `contention` keys for the GPU (beside the CPU's)."""
        if self.unknown is not None:
            return {"gpu_device": self.device, "gpu_unknown": self.unknown}
        return {"gpu_device": self.device, "gpu_others": self.others, "gpu_other_mib": self.other_mib}


def gpu_of_fields(fields: Mapping[str, Scalar]) -> GpuSeen | None:
    """A record's GPU contention read back; None where the record has none (a CPU figure, an older record)."""
    device = fields.get("gpu_device")
    if type(device) is not int:
        return None
    unknown, others, mib = fields.get("gpu_unknown"), fields.get("gpu_others"), fields.get("gpu_other_mib")
    if isinstance(unknown, str):
        return GpuSeen(device, unknown=unknown)
    if type(others) is not int:
        return GpuSeen(device, unknown="the record's GPU contention fields are incomplete")
    return GpuSeen(device, others, float(mib) if isinstance(mib, (int, float)) and not isinstance(mib, bool) else None)


def run_nvidia_smi(args: list[str]) -> str | None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return None
    try:
        return subprocess.run([exe, *args], capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None


def ids_asked_once(run: Runner) -> Runner:
    """`run`, with the GPUs' indexes and UUIDs asked of nvidia-smi once (they do not change during a suite):
    a case then starts it once, for the processes."""
    answers: dict[str, str | None] = {}

    def ask(args: list[str]) -> str | None:
        if args != IDS_QUERY:
            return run(args)
        if "ids" not in answers or answers["ids"] is None:
            answers["ids"] = run(args)
        return answers["ids"]

    return ask


def device_uuid(device_index: int, visible: str | None, uuids: Mapping[str, str]) -> str | None:
    """The UUID of the framework's device `device_index`: CUDA_VISIBLE_DEVICES' entry at that position where
    it is set (an nvidia-smi index, or a UUID or its prefix), else nvidia-smi's index; None where none matches."""
    wanted = str(device_index)
    if visible is not None:
        entries = [entry.strip() for entry in visible.split(",") if entry.strip()]
        if device_index >= len(entries):
            return None
        wanted = entries[device_index]
    if wanted in uuids:
        return uuids[wanted]
    matches = [uuid for uuid in uuids.values() if uuid.startswith(wanted)] if wanted.startswith("GPU-") else []
    return matches[0] if len(matches) == 1 else None


def gpu_seen(device_index: int, own_pids: frozenset[int], run: Runner, visible: str | None) -> GpuSeen:
    """Other processes on the framework's device `device_index`, from nvidia-smi (see the module's docstring)."""
    ids = run(IDS_QUERY)
    apps = run(APPS_QUERY) if ids is not None else None
    if ids is None or apps is None:
        return GpuSeen(device_index, unknown="nvidia-smi is missing or failed")
    uuids = {row[0]: row[1] for row in parse_query_rows(ids) if len(row) >= 2}
    uuid = device_uuid(device_index, visible, uuids)
    if uuid is None:
        return GpuSeen(device_index, unknown=f"device {device_index} is not one nvidia-smi lists "
                                             f"(CUDA_VISIBLE_DEVICES={visible!s}; a MIG instance is not mapped)")
    on_device = [row for row in parse_query_rows(apps) if len(row) >= 3 and row[1] == uuid and row[0].isdigit()]
    if not any(int(row[0]) in own_pids for row in on_device):
        return GpuSeen(device_index, unknown="nvidia-smi does not list this process on its GPU (a container's PID "
                                             "namespace hides the processes), so others cannot be told")
    others = [row for row in on_device if int(row[0]) not in own_pids]
    mib = sum(float(row[2]) for row in others if _is_number(row[2]))
    return GpuSeen(device_index, len(others), mib)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
