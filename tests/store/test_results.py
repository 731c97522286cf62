"""Results store: one complete JSON line per figure, written at once; corrupt lines skipped."""

from __future__ import annotations

import json
from pathlib import Path

from jax_benchmarks.store.record import Record

from jax_benchmarks.run import Run

from jax_benchmarks.store.jsonl import read_records
from jax_benchmarks.measure.timing import Measurement

from tests.conftest import read_jsonl


def _record(run: Run, case: str = "matmul_8x8_float64") -> Record:
    return run.record(
        backend="numpy", case=case, device="cpu", dtype="float64", params={"n": 8},
        measurement=Measurement((0.1, 0.2, 0.3), first_call_s=0.5),
        metrics={"gflops": 1.5}, checks={"mean_ok": True},
    )


def test_record_is_on_disk_as_soon_as_it_is_measured(results_path: Path) -> None:
    run = Run("xla", results_path)
    _record(run)
    lines = read_jsonl(results_path)  # before the run ends
    assert len(lines) == 1
    line = lines[0]
    for key in ("run_id", "timestamp", "group", "backend", "case", "device", "dtype", "params",
                "median_s", "iqr_s", "min_s", "repeats", "samples_s", "compile_s", "metrics",
                "checks", "env"):
        assert key in line, key
    assert line["median_s"] == 0.2 and line["samples_s"] == [0.1, 0.2, 0.3]
    assert line["metrics"]["first_call_s"] == 0.5
    for key in ("python", "numpy", "jax", "jaxlib", "flax", "torch", "cpu", "cpu_cores", "gpu", "git_commit",
                "xla_flags"):
        assert key in line["env"], key


def test_records_of_two_runs_accumulate(results_path: Path) -> None:
    first, second = Run("xla", results_path), Run("xla", results_path)
    _record(first)
    _record(second)
    ids = [r["run_id"] for r in read_jsonl(results_path)]
    assert len(ids) == 2 and ids[0] != ids[1]


def test_corrupt_and_truncated_lines_are_skipped_with_their_number(results_path: Path) -> None:
    run = Run("xla", results_path)
    _record(run, "a")
    with results_path.open("a") as fh:
        fh.write("not json at all\n")
        fh.write(json.dumps({"run_id": "x"}) + "\n")  # valid JSON, not a record
    _record(run, "b")
    with results_path.open("a") as fh:
        fh.write(results_path.read_text().splitlines()[0][:40])  # interrupted write
    warnings: list[str] = []
    records = list(read_records(results_path, warnings.append))
    assert [r.case for r in records] == ["a", "b"]
    assert len(warnings) == 1  # one summary, not one warning per line
    assert f"{results_path}: skipped 3 corrupt or impossible record(s) at line(s) 2, 3, 5" in warnings[0]


def test_format_seconds_picks_the_unit_after_rounding() -> None:
    from jax_benchmarks.cli.tables import format_seconds

    assert format_seconds(9.997e-7) == "1 µs"  # not "1e+03 ns"
    assert format_seconds(0.0123) == "12.3 ms"
    assert format_seconds(2.5) == "2.5 s"
    assert format_seconds(4.2e-8) == "42 ns"
    assert format_seconds(0.0) == "0"
