"""The autograd cases on the core harness: checks, the printed values, what is handed to the agreement."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jax_benchmarks.autograd import numpy_backend
from jax_benchmarks.autograd.cases import AGREEMENT, gradient_suite
from jax_benchmarks.autograd.reference import EXPECTED_DF_X1, EXPECTED_F_X1, X1, Floats, df_exact, f_exact
from jax_benchmarks.frameworks import arrays
from jax_benchmarks.frameworks.arrays import NumpyArrays
from jax_benchmarks.measure.agreement import Computed
from jax_benchmarks.autograd.settings import AutogradSettings, EngineSettings
from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import run_suite
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records
from jax_benchmarks.example_function.in_numpy import f

SETTINGS = AutogradSettings(points=16, dtype="float64", device="cpu")


def exact(x: Floats) -> Floats:
    return df_exact(x)


def off_by(x: Floats) -> Floats:
    return df_exact(x) + 1e-3


def test_the_expected_values_printed_are_the_closed_forms() -> None:
    x1 = np.array([X1])
    assert round(float(f_exact(x1)[0]), 7) == EXPECTED_F_X1
    assert round(float(df_exact(x1)[0]), 7) == EXPECTED_DF_X1


def test_every_variant_is_checked_recorded_and_handed_on_then_a_wrong_one_fails(tmp_path: Path) -> None:
    lines: list[str] = []
    run = Run("autograd", tmp_path / "results.jsonl", log=lines.append)
    suite = gradient_suite("numpy", NumpyArrays(), SETTINGS, value=f,
                           gradients=[("exact", exact), ("wrong", off_by)], compiled=["wrong"])
    with pytest.raises(CheckFailed, match=r"numpy grad_16_float64 \[wrong\] @cpu: max \|error\| f 0, f′ 0.001 > 1e-10"):
        run_suite(run, suite, repeats=1)
    records = list(read_records(run.results.path, warn=pytest.fail))
    assert [(r.case, r.variant) for r in records] == [("grad_16_float64", "exact"), ("grad_16_float64", "wrong")]
    good, bad = records
    assert good.checks["max_abs_err_df"] == 0.0 and bad.checks["max_abs_err_df"] == pytest.approx(1e-3)
    assert good.checks["df_x1"] == pytest.approx(EXPECTED_DF_X1, abs=5e-8)
    assert good.compile_s is None and bad.compile_s is not None
    assert good.metrics["points_per_s"] == pytest.approx(16 / good.median_s)
    # every case logs what it computed, under its variant
    assert sum("f(3.0) = 1.7012903" in line for line in lines) == 2
    assert any("numpy wrong @cpu" in line and "f′(3.0) = -0.2301615" in line for line in lines)
    # what the agreement compares: every value each variant computed, next to its record
    assert [o.record for o in run.outputs] == records
    values = [o.value for o in run.outputs]
    assert all(isinstance(v, Computed) and v.kind == AGREEMENT for v in values)
    assert isinstance(values[1], Computed) and np.size(values[1].values["df"]) == 21 + 16
    np.testing.assert_allclose(np.asarray(values[1].values["df"])[21:], df_exact(np.linspace(0, 10 * np.pi, 16)) + 1e-3)


def test_k_on_the_variant_prints_only_the_selected_cases_values(tmp_path: Path) -> None:
    lines: list[str] = []
    run = Run("autograd", tmp_path / "results.jsonl", log=lines.append)
    suite = gradient_suite("numpy", NumpyArrays(), SETTINGS, value=f,
                           gradients=[("first", exact), ("second", exact)])
    run_suite(run, suite, repeats=1, patterns=("[second]",))
    assert [r.variant for r in run.records] == ["second"]
    assert sum("f′(3.0) = -0.2311615" in line for line in lines) == 1
    assert any("numpy second @cpu" in line for line in lines)


def test_the_engine_off_the_cpu_is_skipped_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrays, "cpu_library_runs", lambda _: False)  # what --device gpu answers
    (suite,) = numpy_backend.suites(EngineSettings(points=16))
    assert suite.target.device == "gpu" and list(suite.cases) == []
    lines: list[str] = []
    run_suite(Run("autograd", tmp_path / "r.jsonl", log=lines.append), suite, repeats=1)
    assert lines == ["numpy: skipped: the engine (on NumPy arrays) runs on the CPU only (--device gpu; use --device cpu or auto)"]
