"""The training's share of peak: NumPy's measured rate on a CPU (a case of the run), the datasheet peak on a GPU."""

from __future__ import annotations

import pytest

from jax_benchmarks.training import throughput


def test_gpu_share_is_of_the_datasheet_peak_not_a_cpu_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throughput, "gpu_name", lambda: "NVIDIA H100 80GB HBM3")
    peak, line = throughput.gpu_peak("float32")
    assert peak == 67_000 and "datasheet" in line
    assert throughput.gpu_peak("tf32")[0] == 494_500
    figures = throughput.throughput(128, 1e-3, 67_000)
    assert figures["images_per_s"] == pytest.approx(128_000)
    assert figures["peak_share"] == pytest.approx(figures["gflops"] / 67_000)
    assert throughput.share_text(figures) == f" ({figures['peak_share']:.0%} of peak)"


def test_unknown_gpu_has_no_share(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throughput, "gpu_name", lambda: "NVIDIA GeForce RTX 4090")
    peak, line = throughput.gpu_peak("float32")
    assert peak is None and "no datasheet peak for NVIDIA GeForce RTX 4090" in line
    figures = throughput.throughput(128, 1e-3, peak)
    assert "peak_share" not in figures and throughput.share_text(figures) == ""
