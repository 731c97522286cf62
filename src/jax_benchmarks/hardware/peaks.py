"""Datasheet peaks of NVIDIA data-center GPUs: the ceiling no honest figure can pass.

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

from dataclasses import dataclass
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
