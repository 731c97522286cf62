"""The sweep's plan, its cases on the harness, its checks, and the sync assumption the timed loop relies on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from jax_benchmarks.frameworks import descriptors
from jax_benchmarks.hardware import devices
from jax_benchmarks.hardware.devices import devices_to_time
from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import Suite, run_suite
from jax_benchmarks.run import Run
from jax_benchmarks.example_function.in_numpy import f
from jax_benchmarks.frameworks import arrays
from jax_benchmarks.frameworks.arrays import NumpyArrays
from jax_benchmarks.jit import jax_backend, numpy_backend, pytorch_backend
from jax_benchmarks.jit.settings import SweepSettings
from jax_benchmarks.jit.sweep import F32, SweepVariant, X1Check, sweep_input, sweep_points, sweep_suite, x1
from tests.conftest import read_jsonl


def sweep_settings(**values: object) -> SweepSettings:
    # model_validate: mypy (without pydantic's plugin) would ask for every field in the constructor
    return SweepSettings.model_validate(values)


def test_lengths_are_capped_by_total_items() -> None:
    points, skipped = sweep_points(100_000)
    assert [(p.array_length, p.loop_count, p.items) for p in points] == [(10_000, 10, 100_000), (100_000, 1, 100_000)]
    assert skipped == ["array_length 1,000,000 > --total-items 100,000",
                       "array_length 10,000,000 > --total-items 100,000"]
    points, skipped = sweep_points(10**8)
    assert [p.loop_count for p in points] == [10_000, 1_000, 100, 10] and skipped == []


def test_auto_is_the_gpu_when_visible_and_all_is_every_device(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    monkeypatch.setattr(devices, "gpu_names", lambda: ())
    assert devices_to_time(sweep_settings(results=results).device) == ("cpu",)
    assert devices_to_time(sweep_settings(device="all", results=results).device) == ("cpu",)
    monkeypatch.setattr(devices, "gpu_names", lambda: ("Some GPU",))
    assert devices_to_time(sweep_settings(results=results).device) == ("gpu",)
    assert devices_to_time(sweep_settings(device="all", results=results).device) == ("cpu", "gpu")
    assert devices_to_time(sweep_settings(device="cpu", results=results).device) == ("cpu",)


def names(suites: list[Suite]) -> list[tuple[str, str, str | None]]:
    return [(s.target.device, c.name, c.variant) for s in suites for c in s.cases]


def test_suites_name_every_case_without_computing_anything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the suites only lists the cases: no input is made, no device found, nothing compiled."""
    def must_not_run(*_: object) -> object:
        raise AssertionError("computed while building the suites")

    monkeypatch.setattr("jax_benchmarks.jit.sweep.sweep_input", must_not_run)
    monkeypatch.setattr(descriptors, "jax_device", must_not_run)
    monkeypatch.setattr(descriptors, "torch_device", must_not_run)
    monkeypatch.setattr(jax_backend, "typed_jit", must_not_run)
    monkeypatch.setattr(pytorch_backend, "compiled_f", must_not_run)
    settings = sweep_settings(total_items=1e6, device="cpu", results=tmp_path / "r.jsonl")
    lengths = ("f_10000_float32", "f_100000_float32", "f_1000000_float32")
    assert names(numpy_backend.suites(settings)) == [("cpu", n, "eager") for n in lengths]
    assert names(jax_backend.suites(settings)) == [("cpu", n, v) for n in lengths for v in ("eager", "jit")]
    torch_suites = pytorch_backend.suites(settings)
    assert names(torch_suites) == [("cpu", n, v) for n in lengths for v in ("eager", "compile")]
    case = torch_suites[0].cases[1]
    assert (case.compiled, case.speedup_over, case.dtype) == (True, "eager", "float32")
    assert case.params["loop_count"] == 100 and int(case.params["torch_threads"]) >= 1
    assert RuntimeError in case.cannot_run


def test_numpy_on_a_gpu_only_request_says_it_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrays, "cpu_library_runs", lambda _request: False)  # what --device gpu answers
    [suite] = numpy_backend.suites(sweep_settings(results=tmp_path / "r.jsonl"))
    logs: list[str] = []
    run = Run("jit", tmp_path / "r.jsonl", log=logs.append)
    run_suite(run, suite, repeats=1)
    assert suite.cases == [] and run.records == []
    assert logs == ["numpy: skipped: NumPy runs on the CPU only (--device gpu; use --device cpu or auto)"]


def numpy_suite(run_dir: Path, total_items: float, *variants: SweepVariant[F32]) -> Suite:
    settings = sweep_settings(total_items=total_items, repeats=1, results=run_dir / "r.jsonl")
    x1_check = X1Check(lambda: {"f(x1)": f(x1())})
    return sweep_suite("fake", NumpyArrays(), settings, list(variants), x1_check, before=x1_check.check)


def eager_f(x: F32) -> F32:
    return np.asarray(f(x), dtype=np.float32)


def test_a_variant_that_cannot_run_is_skipped_with_its_reason(tmp_path: Path) -> None:
    def cannot_compile(_: F32) -> F32:
        raise OSError("no compiler")

    logs: list[str] = []
    run = Run("jit", tmp_path / "r.jsonl", log=logs.append)
    suite = numpy_suite(tmp_path, 1e5, SweepVariant("eager", lambda: eager_f),
                        SweepVariant("compile", lambda: cannot_compile, True, (OSError,)))
    run_suite(run, suite, repeats=1)
    assert [(r.variant, r.params["array_length"]) for r in run.records] == [("eager", 10_000), ("eager", 100_000)]
    x1_errors = [r.checks["x1_max_abs_err"] for r in run.records]  # the x1 check's, on every record
    assert all(isinstance(e, float) and e < 1e-6 for e in x1_errors), x1_errors
    skipped = [line for line in logs if line.startswith("skipped:")]
    assert len(skipped) == 2 and all("OSError: no compiler" in line for line in skipped)


def test_a_wrong_result_is_recorded_then_fails_the_check(tmp_path: Path) -> None:
    def wrong(x: F32) -> F32:
        return np.asarray(f(x) + 0.01, dtype=np.float32)

    run = Run("jit", tmp_path / "r.jsonl")
    with pytest.raises(CheckFailed, match="max \\|f\\(x\\) - reference\\|"):
        run_suite(run, numpy_suite(tmp_path, 1e4, SweepVariant("eager", lambda: wrong)), repeats=1)
    saved = read_jsonl(tmp_path / "r.jsonl")
    assert len(saved) == 1 and saved[0]["checks"]["max_abs_err_vs_numpy_float64"] == pytest.approx(0.01, rel=1e-3)


def test_the_speedup_is_over_eager_of_the_same_length(tmp_path: Path) -> None:
    run = Run("jit", tmp_path / "r.jsonl")
    run_suite(run, numpy_suite(tmp_path, 1e5, SweepVariant("eager", lambda: eager_f),
                               SweepVariant("jit", lambda: eager_f)), repeats=1)
    by_key = {(r.params["array_length"], r.variant): r for r in run.records}
    for length in (10_000, 100_000):
        eager, other = by_key[(length, "eager")], by_key[(length, "jit")]
        assert "speedup" not in eager.metrics
        assert other.metrics["speedup"] == pytest.approx(eager.median_s / other.median_s)  # type: ignore[operator]


def test_x1_comparison_fails_when_implementations_disagree(tmp_path: Path) -> None:
    lines: list[str] = []
    run = Run("jit", tmp_path / "r.jsonl", log=lines.append)
    good = f(x1())
    agreeing = X1Check(lambda: {"f(x1)": good})
    agreeing.check(run)
    assert agreeing.agreement.largest < 1e-6 and lines[-1].startswith("  agree with NumPy float64")
    broken = X1Check(lambda: {"f(x1)": good, "broken(x1)": good + np.float32(1e-2)})
    with pytest.raises(CheckFailed, match="disagree: max"):
        broken.check(run)
    assert broken.agreement.gaps["f(x1)"].pair == ("NumPy float64", "broken(x1)")
    assert broken.agreement.largest == pytest.approx(1e-2, rel=1e-3)  # each against NumPy float64, not pairwise


def test_a_failing_x1_check_stops_the_suite_before_anything_is_measured(tmp_path: Path) -> None:
    run = Run("jit", tmp_path / "r.jsonl")
    suite = numpy_suite(tmp_path, 1e4, SweepVariant("eager", lambda: eager_f))
    broken = X1Check(lambda: {"f(x1)": f(x1()) + 1.0})
    with pytest.raises(CheckFailed, match="disagree"):
        run_suite(run, Suite(suite.target, suite.cases, before=broken.check), repeats=1)
    assert run.records == []


def test_syncing_the_last_result_waits_for_every_dispatched_call() -> None:
    """The timed loop blocks on its last result only: the device must run calls in order."""
    import jax

    from jax_benchmarks.example_function.in_jax import f as jax_f

    jitted = jax.jit(jax_f)
    x = jax.numpy.asarray(sweep_input(1_000_000))
    jitted(x).block_until_ready()
    results = [jitted(x) for _ in range(20)]
    results[-1].block_until_ready()
    assert all(r.is_ready() for r in results)
