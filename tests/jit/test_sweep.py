"""The sweep's plan, its checks, and the sync assumption the timed loop relies on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from src.core import devices
from src.core.devices import devices_to_time
from src.core.errors import CheckFailed
from src.core.results import Run
from src.core.timing import no_sync
from src.jit import sweep
from src.jit.settings import SweepSettings
from src.jit.sweep import F32, SweepTarget, Variant, check_x1, run_sweep, sweep_points
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


def numpy_target(*variants: Variant[F32]) -> SweepTarget[F32]:
    return SweepTarget(backend="fake", device="cpu", to_device=np.array, to_numpy=np.asarray, sync=no_sync,
                       variants=list(variants))


def test_a_variant_that_cannot_run_is_skipped_with_its_reason(tmp_path: Path) -> None:
    def cannot_compile(_: F32) -> F32:
        raise OSError("no compiler")

    logs: list[str] = []
    run = Run("jit", tmp_path / "r.jsonl", log=logs.append)
    settings = sweep_settings(total_items=1e5, repeats=1, results=tmp_path / "r.jsonl")
    target = numpy_target(Variant("eager", sweep.f), Variant("compile", cannot_compile, True, (OSError,)))
    run_sweep(run, settings, target)
    assert [(r.variant, r.params["array_length"]) for r in run.records] == [("eager", 10_000), ("eager", 100_000)]
    skipped = [line for line in logs if line.startswith("skipped:")]
    assert len(skipped) == 2 and all("OSError: no compiler" in line for line in skipped)


def test_a_wrong_result_is_recorded_then_fails_the_check(tmp_path: Path) -> None:
    def wrong(x: F32) -> F32:
        return np.asarray(sweep.f(x) + 0.01, dtype=np.float32)

    run = Run("jit", tmp_path / "r.jsonl")
    settings = sweep_settings(total_items=1e4, repeats=1, results=tmp_path / "r.jsonl")
    with pytest.raises(CheckFailed, match="max \\|f\\(x\\) - reference\\|"):
        run_sweep(run, settings, numpy_target(Variant("eager", wrong)))
    saved = read_jsonl(tmp_path / "r.jsonl")
    assert len(saved) == 1 and saved[0]["checks"]["max_abs_err_vs_numpy_float64"] == pytest.approx(0.01, rel=1e-3)


def test_x1_comparison_fails_when_implementations_disagree(tmp_path: Path) -> None:
    run = Run("jit", tmp_path / "r.jsonl")
    good = sweep.f(sweep.x1())
    assert check_x1(run, {"f(x1)": good}) < 1e-6
    with pytest.raises(CheckFailed, match="disagree"):
        check_x1(run, {"f(x1)": good, "broken(x1)": good + np.float32(1e-2)})


def test_syncing_the_last_result_waits_for_every_dispatched_call() -> None:
    """The timed loop blocks on its last result only: the device must run calls in order."""
    import jax

    from src.jit.jax_backend import f

    jitted = jax.jit(f)
    x = jax.numpy.asarray(sweep.sweep_input(1_000_000))
    jitted(x).block_until_ready()
    results = [jitted(x) for _ in range(20)]
    results[-1].block_until_ready()
    assert all(r.is_ready() for r in results)
