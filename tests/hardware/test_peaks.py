"""Datasheet peaks, and the xla product that claims to beat one."""

from __future__ import annotations

import pytest

from jax_benchmarks.hardware.peaks import datasheet_peak, peak_kind
from jax_benchmarks.xla import workload
from jax_benchmarks.xla.settings import XlaSettings


def test_peaks_by_gpu_dtype_and_precision() -> None:
    sxm = "NVIDIA H100 80GB HBM3"
    assert datasheet_peak(sxm, "float64", "float32").gflops == 67_000  # type: ignore[union-attr]
    assert datasheet_peak(sxm, "float32", "float32").gflops == 67_000  # type: ignore[union-attr]
    assert datasheet_peak(sxm, "float32", "tf32").gflops == 494_500  # type: ignore[union-attr]
    assert datasheet_peak("NVIDIA H100 PCIe", "float32", "tf32").gflops == 378_000  # type: ignore[union-attr]
    assert datasheet_peak("NVIDIA A100-SXM4-80GB", "float64", "float32").gflops == 19_500  # type: ignore[union-attr]
    assert datasheet_peak("NVIDIA GeForce RTX 4090", "float32", "float32") is None
    assert datasheet_peak(None, "float32", "float32") is None
    assert peak_kind("float64", "tf32") == "float64"  # TF32 concerns float32 only


def gpu_settings(precision: str) -> XlaSettings:
    # model_construct: a GPU run's settings without a GPU to validate against.
    return XlaSettings.model_construct(device="gpu", matrix_size=8192, dtype="float32", precision=precision)


def test_a_product_faster_than_the_gpu_can_compute_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.hardware import devices

    monkeypatch.setattr(devices, "gpu_names", lambda: ("NVIDIA H100 80GB HBM3",))
    monkeypatch.setattr(workload, "gpu_name", lambda: "NVIDIA H100 80GB HBM3")
    metrics, problems = workload.peak_figures(50_000.0, gpu_settings("float32"))
    assert metrics == {"peak_gflops": 67_000, "peak_share": pytest.approx(50_000 / 67_000)}
    assert problems == []
    # 13× too fast, as unsynchronized timing of JAX's asynchronous dispatch reports: above IEEE float32's peak.
    metrics, problems = workload.peak_figures(13 * 50_000.0, gpu_settings("float32"))
    assert len(problems) == 1 and "above the GPU's peak" in problems[0]
    # The same figure under --precision tf32 is below the TF32 tensor-core peak.
    assert workload.peak_figures(400_000.0, gpu_settings("tf32"))[1] == []


def test_no_peak_figures_on_cpu() -> None:
    settings = XlaSettings.model_construct(device="cpu", matrix_size=64, dtype="float64", precision="float32")
    assert workload.peak_figures(1e9, settings) == ({}, [])
