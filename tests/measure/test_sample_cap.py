"""A cap that overrides what the user asked for is said and recorded (issue 47, item 4): `--min-time 60` on a
call of microseconds stops at the sample cap long before 60 s; the terminal says so and each record keeps the
window it got and the cap that ended it."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.measure import timing
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
