"""Training speed as images/s, GFLOP/s and a share of the machine's float32 peak."""

from __future__ import annotations

from collections.abc import Mapping

from jax_benchmarks.hardware.devices import gpu_name
from jax_benchmarks.hardware.peaks import datasheet_peak
from jax_benchmarks.measure.derived import peak_share
from jax_benchmarks.training.model_spec import train_flops

# The CPU peak is NumPy's float32 matmul rate at this size (all cores), measured by a case of the run.
PEAK_SIZE = 2048


def peak_matmul_flops() -> int:
    return 2 * PEAK_SIZE**3


def gpu_peak(precision: str) -> tuple[float | None, str]:
    """The datasheet float32 peak of this GPU for --precision (src/jax_benchmarks/hardware/peaks.py; a CPU rate says nothing of a
    GPU), or None for a GPU not in that table (no share is shown then); and a line saying which."""
    name = gpu_name()
    peak = datasheet_peak(name, "float32", precision)
    if peak is None:
        return None, f"no datasheet peak for {name}: the share of peak is not shown"
    return peak.gflops, f"float32 peak of this GPU: {peak.gflops:,.0f} GFLOP/s ({peak.source})"


def throughput(images: int, seconds: float, peak_gflops: float | None) -> dict[str, float]:
    images_per_s = images / seconds
    gflops = train_flops() * images_per_s / 1e9
    figures = {"images_per_s": images_per_s, "gflops": gflops}
    figures.update(peak_share(gflops, peak_gflops)[0])  # never above 1: above the peak is an error
    return figures


def share_text(figures: Mapping[str, float]) -> str:
    return f" ({figures['peak_share']:.0%} of peak)" if "peak_share" in figures else ""
