"""Physical peaks: the ceiling no honest figure can pass. A GPU's from its datasheet; a CPU's from what
the OS reports (`cpu_peak`, below).

A matrix product reported faster than its GPU's peak was not waited for (JAX
dispatches asynchronously: reading the clock before the product exists once
reported a 2000×2000 float64 matmul 13× faster than the hardware can compute
it) or did less work than counted; the xla group fails
such a figure. The values are NVIDIA's published dense (no sparsity) peaks at
boost clock, in GFLOP/s:
* H100 SXM5 and H200 SXM: "NVIDIA H100 Tensor Core GPU" and "NVIDIA H200"
  datasheets: FP64 tensor core 67 TFLOP/s, FP32 67, TF32 tensor core 989 with
  sparsity, so 494.5 dense.
* H100 PCIe: FP64 tensor core 51, FP32 51, TF32 756 with sparsity (378 dense).
* A100 (SXM and PCIe): FP64 tensor core 19.5, FP32 19.5, TF32 312 with sparsity (156 dense).
Other H100 variants match the SXM5 row, the fastest H100, so the value stays a
ceiling. Float64 products run on the FP64 tensor cores, IEEE float32 products on the
FP32 units, `--precision tf32` products on the TF32 tensor cores.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

PeakKind = Literal["float64", "float32", "tf32"]


@dataclass(frozen=True)
class Peak:
    gflops: float
    source: str


# (substrings that must all appear in nvidia-smi's name, lower case) -> peaks; the first match wins,
# so the more specific names come first.
_TABLE: tuple[tuple[tuple[str, ...], str, dict[PeakKind, float]], ...] = (
    (("h100", "pcie"), "NVIDIA H100 PCIe datasheet", {"float64": 51_000, "float32": 51_000, "tf32": 378_000}),
    (("h100",), "NVIDIA H100 SXM5 datasheet", {"float64": 67_000, "float32": 67_000, "tf32": 494_500}),
    (("h200",), "NVIDIA H200 SXM datasheet", {"float64": 67_000, "float32": 67_000, "tf32": 494_500}),
    (("a100",), "NVIDIA A100 datasheet", {"float64": 19_500, "float32": 19_500, "tf32": 156_000}),
)


def peak_kind(dtype: str, precision: str) -> PeakKind | None:
    """Which unit a product of `dtype` under the run's `--precision` runs on."""
    if dtype == "float64":
        return "float64"
    if dtype == "float32":
        return "tf32" if precision == "tf32" else "float32"
    return None


def datasheet_peak(gpu_name: str | None, dtype: str, precision: str) -> Peak | None:
    """The published peak for this GPU and product, or None for GPUs not in the table."""
    kind = peak_kind(dtype, precision)
    if gpu_name is None or kind is None:
        return None
    name = gpu_name.lower()
    for needles, source, peaks in _TABLE:
        if all(needle in name for needle in needles):
            return Peak(peaks[kind], f"{source}, {kind} dense")
    return None


# ------------------------------------------------------------------ CPU ---
# A CPU core retires at most FMA_UNITS fused multiply-adds a cycle on each of its SIMD lanes: 2 FLOP per
# lane per unit. The number of FMA units is not reported by the OS; 2 is the most any x86 core has
# (Intel since Haswell, AMD since Zen), so the peak is a ceiling: a CPU with one unit reaches half of it.
FMA_UNITS = 2
# Where the OS reports no maximum clock (no cpufreq, as in most VMs) there is no peak to share against,
# but a measured rate can still be checked against a ceiling at the fastest clock any x86 CPU runs at
# (6.2 GHz, Intel Core i9-14900KS's boost).
FASTEST_CLOCK_MHZ = 6200.0
# SIMD register width in bits, by the cpuinfo flag that announces it; the first present wins.
SIMD_BITS = (("avx512f", 512), ("avx2", 256), ("avx", 256), ("sse2", 128), ("asimd", 128))
ITEM_BITS = {"float32": 32, "float64": 64}


@dataclass(frozen=True)
class CpuFacts:
    """What the OS reports of the CPUs this process may use."""

    flags: frozenset[str]
    cores: int  # physical cores (a core's SMT siblings share its FMA units)
    max_mhz: float | None  # the highest maximum clock cpufreq reports; None: not reported


def parse_cpuinfo(text: str, allowed: frozenset[int] | None) -> tuple[frozenset[str], int]:
    """The flags of /proc/cpuinfo and the physical cores among the `allowed` processors (all where None):
    distinct (physical id, core id) pairs, or the processors themselves where those are not reported."""
    flags: frozenset[str] = frozenset()
    cores: set[tuple[str, str]] = set()
    processors = 0
    for block in text.split("\n\n"):
        fields = {key.strip(): value.strip() for key, _, value in
                  (line.partition(":") for line in block.splitlines()) if key.strip()}
        if "processor" not in fields or not fields["processor"].isdigit():
            continue
        if allowed is not None and int(fields["processor"]) not in allowed:
            continue
        processors += 1
        flags = flags or frozenset((fields.get("flags") or fields.get("Features") or "").split())
        if "core id" in fields:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
    return flags, len(cores) or processors


def cpu_facts() -> CpuFacts:
    """This machine's `CpuFacts`, from /proc/cpuinfo and /sys/devices/system/cpu/cpu*/cpufreq."""
    allowed = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    flags, cores = parse_cpuinfo(text, allowed)
    clocks = []
    for cpu in sorted(allowed or range(os.cpu_count() or 1)):
        try:
            clocks.append(int(Path(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/cpuinfo_max_freq").read_text()) / 1000)
        except (OSError, ValueError):
            pass
    return CpuFacts(flags, cores, max(clocks) if clocks else None)


def simd_lanes(flags: frozenset[str], dtype: str) -> tuple[int, str] | None:
    """How many `dtype` numbers one SIMD register holds, and the flag that says so; None: unknown."""
    bits = ITEM_BITS.get(dtype)
    for flag, width in SIMD_BITS:
        if bits is not None and flag in flags:
            return width // bits, flag
    return None


def cpu_peak(facts: CpuFacts, dtype: str, *, ceiling: bool = False) -> tuple[Peak | None, str]:
    """cores × SIMD lanes × 2 FLOP × FMA_UNITS × the maximum clock, for `dtype`; or None and why not.
    `ceiling`: where no maximum clock is reported, the bound at FASTEST_CLOCK_MHZ instead (a check's
    bound, never a peak to share against)."""
    lanes = simd_lanes(facts.flags, dtype)
    if lanes is None:
        return None, (f"no SIMD width is known for this CPU's {dtype} (none of the flags "
                      f"{', '.join(flag for flag, _ in SIMD_BITS)}): no physical peak, so no share of it is shown")
    mhz, clock = facts.max_mhz, "cpufreq maximum"
    if mhz is None:
        if not ceiling:
            return None, ("the OS reports no maximum clock for this CPU (no cpufreq in /sys, as in most VMs): "
                          "its physical peak is unknown, so no share of it is shown")
        mhz, clock = FASTEST_CLOCK_MHZ, "the fastest clock of any x86 CPU"
    count, flag = lanes
    gflops = facts.cores * count * 2 * FMA_UNITS * mhz / 1000
    source = (f"{facts.cores} cores × {count} {dtype} lanes ({flag}) × 2 FLOP (FMA) × {FMA_UNITS} FMA units × "
              f"{mhz / 1000:.2f} GHz ({clock})")
    what = f"physical {dtype} peak of this CPU" if facts.max_mhz is not None else f"ceiling of this CPU's {dtype} rate"
    return Peak(gflops, source), f"{what}: {gflops:,.1f} GFLOP/s ({source})"


def share_of_peak(rate_gflops: float, peak: Peak, whose: str = "the physical") -> tuple[float | None, str | None]:
    """The share of the physical peak a measured rate reaches, never above 1; above the peak the rate is
    a measurement error (not waited for, less work than counted, a clock that lies): no share, and the
    error ("... is above {whose} peak of ...")."""
    if rate_gflops > peak.gflops:
        return None, (f"{rate_gflops:,.1f} GFLOP/s is above {whose} peak of {peak.gflops:,.1f} "
                      f"({peak.source}): a measurement error")
    return rate_gflops / peak.gflops, None
