"""The training's share of peak: NumPy's measured rate on a CPU, the datasheet peak on a GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from src.core.results import Run
from src.mnist import training
from src.mnist.settings import MnistSettings


def settings(precision: str) -> MnistSettings:
    return MnistSettings.model_construct(precision=precision, repeats=1)


def test_gpu_share_is_of_the_datasheet_peak_not_a_cpu_rate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "gpu_name", lambda: "NVIDIA H100 80GB HBM3")
    logged: list[str] = []
    run = Run("mnist", tmp_path / "r.jsonl", log=logged.append)
    assert training.peak_gflops(run, settings("float32"), "flax", "gpu", None) == 67_000
    assert training.peak_gflops(run, settings("tf32"), "flax", "gpu", None) == 494_500
    assert run.records == []  # nothing measured on the CPU and recorded as if it were the GPU's
    assert "datasheet" in logged[0]
    assert training.throughput(128, 1e-3, 67_000)["peak_share"] == pytest.approx(
        training.train_flops() * 128e3 / 1e9 / 67_000)


def test_unknown_gpu_has_no_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "gpu_name", lambda: "NVIDIA GeForce RTX 4090")
    run = Run("mnist", tmp_path / "r.jsonl")
    peak = training.peak_gflops(run, settings("float32"), "pytorch", "gpu", None)
    assert peak is None
    figures = training.throughput(128, 1e-3, peak)
    assert "peak_share" not in figures and training.share_text(figures) == ""
