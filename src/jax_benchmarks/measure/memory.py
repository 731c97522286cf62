"""Memory figures of a case: host peak, device peak, compiled-program bytes.

What is read, and from where (docs/memory.md explains the choices):

* host: the kernel's high-water mark of the process's resident memory. Writing "5" to
  /proc/self/clear_refs resets VmHWM to the current VmRSS (proc(5), Linux 4.0+); VmHWM read from
  /proc/self/status after the case is then the case's peak. The record keeps what the process held
  before (`host_held_bytes`, VmRSS) and the peak above it (`host_peak_bytes`). Where the reset or the
  read is impossible (not Linux, no /proc, no permission) the record says so in `host_status` and
  holds no host figure: a figure from another source would not mean the same thing.
* device (a case on a GPU): the framework allocator's own statistics. PyTorch: the peak of
  `memory_allocated` since `reset_peak_memory_stats`, and `max_memory_reserved` (what its caching
  allocator held from the driver). JAX: `Device.memory_stats()`; its `peak_bytes_in_use` is a peak
  over the process's life that JAX cannot reset, so it is the case's peak only when the case raised
  it; otherwise the record says the peak is not attributable. Reserved beside in use: the pool
  (`bytes_reserved`, else `bytes_limit` with JAX's preallocation) and the limit.
* compiled program (JAX/Flax jit): XLA's memory analysis of the compiled executable, exact and
  deterministic, on the CPU too. torch.compile (Inductor) offers no such analysis: the record says
  that it is not available.

Peaks are stored above what the process or device held before, so that a case's figure is its own
cost, not the framework's import or an earlier case's arrays.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jax_benchmarks.store.record import Scalar

PROC_STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
# proc(5): writing 5 to clear_refs resets the peak resident set size (VmHWM) to the current one.
RESET_PEAK = "5"
KIB = 1024  # /proc/self/status and /proc/meminfo count in kB (kibibytes)
GIB = 2**30
PROC_MEMINFO = Path("/proc/meminfo")

MEASURED = "measured"
# How the figures were taken: a call of its own after the timed samples, or around the one timed
# run of work that can only be done once (an epoch, a solve).
SEPARATE_PASS = "untimed pass"
AROUND_TIMED_RUN = "around the timed run"

# Keys of a record's `memory`, in the order tables show them; every one is a byte count.
SHOWN_BYTES = ("host_peak_bytes", "device_peak_bytes", "device_reserved_bytes", "compiled_argument_bytes",
               "compiled_output_bytes", "compiled_temp_bytes", "compiled_code_bytes")
SHORT_NAMES = {"host_peak_bytes": "host peak", "device_peak_bytes": "device peak",
               "device_reserved_bytes": "device reserved", "compiled_argument_bytes": "compiled arguments",
               "compiled_output_bytes": "compiled outputs", "compiled_temp_bytes": "compiled temporaries",
               "compiled_code_bytes": "compiled code"}


# ------------------------------------------------------------------ host ---

def status_bytes(text: str) -> dict[str, int]:
    """The `Vm*` lines of /proc/self/status, in bytes (the file counts in kB)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        fields = rest.split()
        if name.startswith("Vm") and len(fields) == 2 and fields[1] == "kB" and fields[0].isdigit():
            values[name] = int(fields[0]) * KIB
    return values


def read_status(path: Path = PROC_STATUS) -> dict[str, int]:
    return status_bytes(path.read_text())


def release_freed_memory() -> None:
    """Collect Python's garbage, then ask glibc to return freed heap pages to the kernel (`malloc_trim`).

    Without it, memory an earlier call freed stays resident and a later allocation reuses it without
    raising the resident set: the case's peak above what the process held would read too low. NumPy,
    PyTorch's CPU allocator and XLA's CPU buffers all allocate through malloc. Not glibc: nothing to do.

    What survives the full collection is frozen (`gc.freeze`): a full collection walks every object the collector
    tracks, and with JAX and PyTorch imported that took 0.1–0.19 s a call, 1.8 s of an 18 s `xla all
    --matrix-size 1000` round that calls this once a case (benchmarks/release_cost.py). The survivors are the
    process's own (modules, caches, fixtures the group keeps): later calls walk only what was made since. Garbage
    is collected before it is frozen, so nothing that is garbage now stays; a survivor that later becomes part of
    a reference cycle is kept, not freed, so its pages are never reused by a later case and cannot lower that
    case's peak.
    """
    gc.collect()
    gc.freeze()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): no malloc_trim
        return None
    return trim


@dataclass
class HostPeak:
    """The process's peak resident memory between `start` and `stop`."""

    status: Path = PROC_STATUS
    clear_refs: Path = CLEAR_REFS
    held: int | None = None
    problem: str | None = None

    def start(self) -> None:
        try:
            self.clear_refs.write_text(RESET_PEAK)
            self.held = read_status(self.status)["VmRSS"]
        except FileNotFoundError as exc:
            self.problem = f"{exc.filename} does not exist (the peak is read from Linux's /proc)"
        except (OSError, KeyError) as exc:
            self.problem = f"cannot reset or read the peak resident memory: {_reason(exc)}"

    def stop(self) -> dict[str, Scalar]:
        if self.problem is not None or self.held is None:
            return {"host_status": f"unavailable: {self.problem}"}
        try:
            peak = read_status(self.status)["VmHWM"]
        except (OSError, KeyError) as exc:
            return {"host_status": f"unavailable: cannot read the peak resident memory: {_reason(exc)}"}
        return {"host_status": MEASURED, "host_peak_bytes": max(peak - self.held, 0), "host_held_bytes": self.held}


def _reason(exc: BaseException) -> str:
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]} line in {PROC_STATUS}"
    if isinstance(exc, OSError):
        return f"{exc.filename}: {exc.strerror}"
    return str(exc)


# ---------------------------------------------------------------- device ---

class DevicePeak:
    """A framework allocator's peak between `start` and `stop`; `figures()` says why not where it cannot."""

    def before_timing(self) -> None:
        """Called before the timed calls of a case measured in a separate pass (reads counters only)."""

    def start(self, settle: bool) -> None:
        """`settle`: first hand cached, unused memory back, so that the reserved figure is the case's."""

    def stop(self) -> dict[str, Scalar]:
        raise NotImplementedError


@dataclass
class NoDevicePeak(DevicePeak):
    reason: str

    def stop(self) -> dict[str, Scalar]:
        return {"device_status": f"unavailable: {self.reason}"}


# How a backend's device memory is read: its framework's allocator statistics, opened for one case. A backend
# declares it on its spec (`cli.commands.BackendSpec.device_memory`, from its framework's descriptor in
# jax_benchmarks.frameworks.descriptors); the framework is imported only then.
DeviceMemory = Callable[[], DevicePeak]


def device_peak(device_memory: DeviceMemory | None, backend: str, device: str) -> DevicePeak | None:
    """The allocator statistics of a case on a GPU; None for a case on the CPU (no device figure)."""
    if device != "gpu":
        return None
    if device_memory is None:
        return NoDevicePeak(f"no allocator statistics are read for the {backend} backend")
    return device_memory()


# -------------------------------------------------------------- compiled ---

@dataclass(frozen=True)
class NoAnalysis:
    """What a case's compiled-program declaration returns where its compiler reports no memory analysis."""

    reason: str


TORCH_COMPILE = NoAnalysis("torch.compile (Inductor) reports no memory analysis of the code it generates")


def jax_program(jitted: Callable[..., Any], *args: Any) -> Callable[[], object]:
    """How a `jax.jit` function's compiled program is obtained for these arguments (lowered and compiled
    again after the timed samples: JAX's compilation cache makes it cheap, and it is untimed)."""
    return lambda: getattr(jitted, "lower")(*args).compile()


def compiled_figures(program: Callable[[], object]) -> dict[str, Scalar]:
    """XLA's memory analysis of the compiled program: argument, output, temporary and generated-code bytes."""
    try:
        compiled = program()
        analysis = compiled if isinstance(compiled, NoAnalysis) else getattr(compiled, "memory_analysis")()
    except Exception as exc:  # a program that cannot be obtained again is a missing figure, not a failed case
        return {"compiled_status": f"unavailable: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
                if str(exc).strip() else f"unavailable: {type(exc).__name__}"}
    if isinstance(analysis, NoAnalysis):
        return {"compiled_status": f"unavailable: {analysis.reason}"}
    if analysis is None:
        return {"compiled_status": "unavailable: the compiler returned no memory analysis"}
    return {
        "compiled_status": MEASURED,
        "compiled_argument_bytes": int(analysis.argument_size_in_bytes),
        "compiled_output_bytes": int(analysis.output_size_in_bytes),
        "compiled_temp_bytes": int(analysis.temp_size_in_bytes),
        "compiled_code_bytes": int(analysis.generated_code_size_in_bytes),
        "compiled_alias_bytes": int(analysis.alias_size_in_bytes),
    }


# ----------------------------------------------------------------- probe ---

@dataclass
class Probe:
    """Host and device peaks of one case, read around a call (or the one timed run)."""

    device: DevicePeak | None
    host: HostPeak

    @classmethod
    def of(cls, device_memory: DeviceMemory | None, backend: str, device: str) -> Probe:
        return cls(device_peak(device_memory, backend, device), HostPeak())

    def before_timing(self) -> None:
        if self.device is not None:
            self.device.before_timing()

    def start(self, *, settle: bool) -> None:
        """`settle` (a separate pass): first free what earlier calls left, so the peak above is the case's,
        and empty the device allocator's cache. Around a timed run the harness has already handed the heap
        back (`harness.measure_case`), and the device cache is kept: emptying it would put the driver's
        allocations inside the timed work, and the allocator's statistics count reused blocks anyway."""
        if settle:
            release_freed_memory()
        if self.device is not None:
            self.device.start(settle)
        self.host.start()

    def stop(self, method: str) -> dict[str, Scalar]:
        figures: dict[str, Scalar] = {"memory_method": method, **self.host.stop()}
        if self.device is not None:
            figures.update(self.device.stop())
        return figures


# ------------------------------------------------------------------ text ---

def parse_meminfo(text: str) -> int | None:
    """MemAvailable (what can be allocated without swapping) from /proc/meminfo, in bytes."""
    for line in text.splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * KIB  # the file counts in kB
    return None


def host_available_bytes() -> int | None:
    """Free host memory, or None where /proc/meminfo does not exist (a guard that reads None refuses nothing)."""
    try:
        return parse_meminfo(PROC_MEMINFO.read_text())
    except OSError:
        return None


def format_gib(n_bytes: int) -> str:
    """A size in GiB, three significant digits (a refusal's "needs 12.5 GiB, 3.2 GiB free")."""
    gib = n_bytes / GIB
    return f"{gib:,.0f} GiB" if gib >= 1000 else f"{gib:.3g} GiB"


def format_bytes(n_bytes: float) -> str:
    """Three significant digits in binary units: 512 B, 1.5 KiB, 24.4 MiB, 3.00 GiB."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def memory_text(memory: Mapping[str, Scalar]) -> str:
    """'host peak 24.4 MiB · device peak 1.2 GiB (reserved 2 GiB)' for a log line; '' when nothing measured."""
    parts = []
    host = memory.get("host_peak_bytes")
    if isinstance(host, int):
        parts.append(f"host peak {format_bytes(host)}")
    device, reserved = memory.get("device_peak_bytes"), memory.get("device_reserved_bytes")
    if isinstance(device, int):
        parts.append(f"device peak {format_bytes(device)}"
                     + (f" (reserved {format_bytes(reserved)})" if isinstance(reserved, int) else ""))
    return " · ".join(parts)
