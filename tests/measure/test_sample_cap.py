"""A cap that overrides what the user asked for is said and recorded (issue 47, item 4): `--min-time 60` on a
call of microseconds stops at the sample cap long before 60 s; the terminal says so and each record keeps the
window it got and the cap that ended it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jax_benchmarks.measure import timing
from jax_benchmarks.measure.energy import EnergyWindow
from jax_benchmarks.measure.timing import measure
from tests.conftest import invoke, read_jsonl


def test_a_window_cut_short_by_the_cap_is_said_on_the_measurement() -> None:
    capped = measure(lambda: None, repeats=3, min_time_s=60.0, max_repeats=12)
    assert capped.repeats == 12 and capped.sample_cap == 12
    assert capped.window_s is not None and 0 < capped.window_s < 60.0


@pytest.mark.parametrize("min_time_s", [0.0, 0.005])
def test_a_window_reached_says_no_cap(min_time_s: float) -> None:
    reached = measure(lambda: None, repeats=3, min_time_s=min_time_s, max_repeats=1000)
    assert reached.sample_cap is None and reached.window_s is None


def test_the_default_cap_is_read_when_measuring(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "MAX_SAMPLES", 7)
    assert measure(lambda: None, repeats=2, min_time_s=60.0).repeats == 7


def test_min_time_beyond_the_cap_is_said_and_recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(timing, "MAX_SAMPLES", 8)  # the cap, reached in milliseconds instead of seconds
    results = tmp_path / "r.jsonl"
    result = invoke("xla", "numpy", "--matrix-size", "8", "-k", "sum,mean", "--repeats", "2", "--min-time", "60",
                    "--results", str(results))
    assert result.exit_code == 0, result.stderr + result.stdout
    out = " ".join(result.stdout.split())
    assert ("numpy: 2 figure(s) stopped at the cap of 8 samples before --min-time 60 s (shortest window" in out
            and "their records say so (metrics sample_cap, window_s)" in out), out
    records = read_jsonl(results)
    assert len(records) == 2
    for record in records:
        assert record["repeats"] == 8 and record["metrics"]["sample_cap"] == 8
        assert 0 < record["metrics"]["window_s"] < 60 and record["env"]["min_time_s"] == 60


def test_a_reachable_min_time_says_nothing_of_a_cap(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    result = invoke("xla", "numpy", "--matrix-size", "8", "-k", "sum", "--repeats", "2", "--min-time", "0.01",
                    "--results", str(results))
    assert result.exit_code == 0, result.stderr
    assert "stopped at the cap" not in result.stdout
    [record] = read_jsonl(results)
    assert "sample_cap" not in record["metrics"] and "window_s" not in record["metrics"]


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_a_block_calibrated_on_one_slow_call_is_calibrated_again() -> None:
    """The first call and the warm-up call take 5 ms (a cold start), every later one 10 µs: the block calibrated on
    the warm-up call holds one call, and 1000 samples of 10 µs would end at the cap after 0.01 s of the 0.05 s
    asked for. Calibrated again on the first samples, the block holds about 200 calls and the window is reached."""
    calls = iter(range(10**9))

    def cold_then_cheap() -> None:
        spin(0.005 if next(calls) < 2 else 1e-5)

    measured = measure(cold_then_cheap, repeats=3, min_time_s=0.05, block_s=2e-3)
    assert measured.calls_per_sample > 20, measured.calls_per_sample
    assert measured.sample_cap is None and measured.window_s is None
    # the dropped samples (5 blocks of one call) count as warm-up beside the one warm-up call
    assert measured.warmup == 1 + timing.RECALIBRATE_AFTER


def test_a_block_calibrated_right_is_kept() -> None:
    """A call that takes as long every time keeps its first block: nothing dropped, warm-up as asked."""
    measured = measure(lambda: spin(0.003), repeats=8, min_time_s=0.0, block_s=2e-3)
    assert measured.calls_per_sample == 1 and measured.warmup == 1 and measured.repeats == 8


def test_the_energy_window_holds_only_the_kept_samples() -> None:
    """A stand-in counter that gains 1 mJ a call: after the block is sized again, the window's energy and its call
    count are those of the kept samples alone (1 mJ a call), not of the dropped ones too."""
    calls = [0]

    def cold_then_cheap() -> None:
        calls[0] += 1
        spin(0.005 if calls[0] <= 2 else 1e-5)

    window = EnergyWindow(counter=lambda: calls[0])
    measured = measure(cold_then_cheap, repeats=3, min_time_s=0.02, block_s=2e-3, window=window)
    assert measured.warmup > 1  # the block was sized again
    assert window.calls == measured.repeats * measured.calls_per_sample
    assert window.millijoules == window.calls
