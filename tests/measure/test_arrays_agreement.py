"""The one device adapter per framework, the one CPU-only rule, and the one agreement mechanism."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.frameworks import arrays
from jax_benchmarks.frameworks import descriptors
from jax_benchmarks.frameworks.arrays import NumpyArrays, cpu_only_suites
from jax_benchmarks.frameworks.descriptors import JaxArrays, TorchArrays
from jax_benchmarks.hardware import devices
from jax_benchmarks.measure.agreement import Computed, compare, record_agreement, widest_gap
from jax_benchmarks.measure.harness import Suite, Target, run_suite
from jax_benchmarks.store.record import Output
from jax_benchmarks.run import Run


@pytest.mark.parametrize("make", [NumpyArrays, lambda: JaxArrays("cpu"), lambda: TorchArrays("cpu")])
def test_every_framework_round_trips_numpy_and_waits(make: object) -> None:
    adapter = make()  # type: ignore[operator]
    x = np.linspace(0, 1, 7, dtype=np.float32)
    on_device = adapter.to_device(x)
    adapter.sync(on_device)
    back = adapter.to_numpy(on_device)
    assert isinstance(back, np.ndarray) and back.dtype == np.float32
    np.testing.assert_array_equal(back, x)
    assert adapter.kind == "cpu"


def test_making_an_adapter_finds_no_device(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_device(*_: object) -> None:
        raise AssertionError("a device was looked up")

    monkeypatch.setattr(descriptors, "jax_device", no_device)
    monkeypatch.setattr(descriptors, "torch_device", no_device)
    JaxArrays("gpu"), TorchArrays("gpu")  # declared for a GPU on a machine without one: nothing happens


def cpu_suite(lines: list[str]) -> list[Suite]:
    return [Suite(Target("numpy", "cpu"), [], before=lambda run: lines.append("the suite's own before"))]


def test_a_cpu_only_library_is_skipped_under_device_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_names", lambda: ("Some GPU",))
    lines: list[str] = []
    (suite,) = cpu_only_suites("numpy", "NumPy", "gpu", lambda: cpu_suite(lines))
    run_suite(Run("t", tmp_path / "r.jsonl", log=lines.append), suite, repeats=1)
    assert suite.target.device == "gpu" and lines == [
        "numpy: skipped: NumPy runs on the CPU only (--device gpu; use --device cpu or auto)"]


@pytest.mark.parametrize(("gpus", "request_", "said"), [
    (("Some GPU",), "auto", True), (("Some GPU",), "all", True), ((), "auto", False), (("Some GPU",), "cpu", False),
])
def test_a_cpu_only_library_runs_on_the_cpu_and_says_so_beside_a_gpu(
        gpus: tuple[str, ...], request_: devices.DeviceRequest, said: bool, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "gpu_names", lambda: gpus)
    monkeypatch.setattr(arrays, "devices_to_time", devices.devices_to_time)
    lines: list[str] = []
    (suite,) = cpu_only_suites("numpy", "NumPy", request_, lambda: cpu_suite(lines))
    run_suite(Run("t", tmp_path / "r.jsonl", log=lines.append), suite, repeats=1)
    note = "numpy: NumPy runs on the CPU only: its figures are CPU figures (device cpu)"
    assert suite.target.device == "cpu"
    assert lines == ([note] if said else []) + ["the suite's own before"]


def test_the_widest_gap_is_pairwise_or_against_a_reference() -> None:
    values = {"a": [1.0, 2.0], "b": [1.0, 2.5], "c": [0.0, 2.0]}
    assert widest_gap(values, "abs").size == 1.0 and widest_gap(values, "abs").pair == ("b", "c")
    against_a = widest_gap(values, "abs", reference="a")
    assert against_a.size == 1.0 and against_a.pair == ("a", "c")
    assert widest_gap({"a": [2.0], "b": [1.0]}, "rel").size == 0.5
    assert math.isinf(widest_gap({"a": [1.0], "b": [float("nan")]}, "abs").size)  # NaN never agrees


def test_compare_checks_every_shared_quantity_against_the_tolerance() -> None:
    agreement = compare({"x": {"f": [1.0], "df": [2.0]}, "y": {"f": [1.0], "df": [2.1]}}, 0.05, "abs")
    assert not agreement.passed and agreement.largest == pytest.approx(0.1)
    checks = agreement.checks()
    assert checks["max_abs_diff_f"] == 0.0 and checks["df_pair"] == "x vs y" and checks["passed"] is False


def test_record_agreement_needs_two_backends_and_records_before_failing(tmp_path: Path) -> None:
    run = Run("t", tmp_path / "r.jsonl")

    def computed(backend: str, value: float, kind: str = "k") -> None:
        record = run.record(backend=backend, case="op_1_float32", device="cpu", dtype="float32")
        run.outputs.append(Output(record, Computed(kind, {"v": [value]})))

    computed("jax", 1.0)
    computed("torch", 5.0, kind="another comparison")
    assert record_agreement(run, "k", tolerance=0.1, difference="abs") is None
    computed("numpy", 1.5)
    with pytest.raises(CheckFailed, match=r"backends disagree: largest disagreement \(absolute\) v 0.5 "
                                          r"\(jax @cpu vs numpy @cpu\); tolerance 0.1; try less"):
        record_agreement(run, "k", tolerance=0.1, difference="abs", hint="try less")
    agreement = run.records[-1]
    assert (agreement.backend, agreement.case, agreement.device) == ("all", "agreement_op_1_float32", "cpu")
    assert agreement.params == {"compared": ["jax @cpu", "numpy @cpu"]}
