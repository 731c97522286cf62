"""Datasheet peaks, and the xla product that claims to beat one."""

from __future__ import annotations

import pytest

from jax_benchmarks.hardware.peaks import CpuFacts, Peak, cpu_peak, datasheet_peak, parse_cpuinfo, peak_kind, share_of_peak
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


def cpu_settings(dtype: str) -> XlaSettings:
    return XlaSettings.model_construct(device="cpu", matrix_size=64, dtype=dtype, precision="float32")


AVX2 = frozenset({"sse2", "avx", "avx2", "fma"})


def test_cpu_peak_from_what_the_os_reports() -> None:
    # 2 cores × 8 float32 lanes (AVX2) × 2 FLOP × 2 FMA units × 3.0 GHz = 192 GFLOP/s; float64 half of it.
    facts = CpuFacts(AVX2, cores=2, max_mhz=3000.0)
    assert cpu_peak(facts, "float32")[0].gflops == pytest.approx(192.0)  # type: ignore[union-attr]
    assert cpu_peak(facts, "float64")[0].gflops == pytest.approx(96.0)  # type: ignore[union-attr]
    assert cpu_peak(CpuFacts(frozenset({"avx512f", "avx2"}), 4, 2000.0), "float32")[0].gflops == pytest.approx(512.0)  # type: ignore[union-attr]
    assert "8 float32 lanes (avx2)" in cpu_peak(facts, "float32")[1]


def test_a_cpu_missing_from_the_tables_says_why_no_share() -> None:
    no_clock = CpuFacts(AVX2, cores=2, max_mhz=None)
    peak, why = cpu_peak(no_clock, "float32")
    assert peak is None and "no maximum clock" in why and "no share" in why
    ceiling, line = cpu_peak(no_clock, "float32", ceiling=True)
    assert ceiling is not None and ceiling.gflops == pytest.approx(2 * 8 * 2 * 2 * 6.2) and "ceiling" in line
    unknown, why = cpu_peak(CpuFacts(frozenset({"neon_unknown"}), 8, 3000.0), "float32")
    assert unknown is None and "no SIMD width" in why and "no share" in why


def test_parse_cpuinfo_counts_physical_cores_of_the_allowed_processors() -> None:
    block = "processor\t: {n}\nphysical id\t: 0\ncore id\t\t: {core}\nflags\t\t: fpu sse2 avx avx2 fma\n"
    # 4 processors, 2 cores with 2 SMT siblings each: siblings share their core's FMA units.
    text = "\n".join(block.format(n=n, core=n // 2) for n in range(4))
    assert parse_cpuinfo(text, None) == (frozenset({"fpu", "sse2", "avx", "avx2", "fma"}), 2)
    assert parse_cpuinfo(text, frozenset({0, 1}))[1] == 1
    assert parse_cpuinfo("processor : 0\n\nprocessor : 1\n", None)[1] == 2  # no topology: processors


@pytest.mark.parametrize("rate", [0.0, 1.0, 150.0, 191.9, 192.0, 192.1, 1e6])
def test_no_share_of_peak_above_100_percent(rate: float) -> None:
    """The physical bound of the derived figure: a share is at most 1, a rate above the peak is an error."""
    peak = Peak(192.0, "test")
    share, error = share_of_peak(rate, peak)
    if rate <= 192.0:
        assert share is not None and 0.0 <= share <= 1.0 and error is None
    else:
        assert share is None and error is not None and "measurement error" in error


def test_a_cpu_product_faster_than_the_cpu_can_compute_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workload, "cpu_facts", lambda: CpuFacts(AVX2, cores=2, max_mhz=3000.0))
    assert workload.peak_figures(100.0, cpu_settings("float32")) == (
        {"peak_gflops": pytest.approx(192.0), "peak_share": pytest.approx(100 / 192)}, [])
    metrics, problems = workload.peak_figures(100.0, cpu_settings("float64"))
    assert metrics == {} and len(problems) == 1 and "above this CPU's peak" in problems[0]
    # No maximum clock reported: no share, but the ceiling at 6.2 GHz still fails an impossible rate.
    monkeypatch.setattr(workload, "cpu_facts", lambda: CpuFacts(AVX2, cores=2, max_mhz=None))
    assert workload.peak_figures(100.0, cpu_settings("float32")) == ({}, [])
    assert workload.peak_figures(1e9, cpu_settings("float64"))[1] != []
