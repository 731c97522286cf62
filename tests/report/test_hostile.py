"""`report` reads any file it is given without a traceback: hostile lines are skipped in one summary."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import invoke
from tests.report.fixtures import XLA_NEW, XLA_OLD, write_results, xla_rounds, xla_run

GOOD_CASES = {"matmul_100x100_float64", "inv_100x100_float64"}


def _good() -> list[str]:
    return [r.model_dump_json() for r in xla_run(XLA_NEW, "2025-01-02T10:00:00+00:00", jax_matmul_s=1e-3)]


def _impossible(**changes: Any) -> str:
    record = json.loads(_good()[0])
    record.update(case="impossible_case", **changes)
    return json.dumps(record)  # json.dumps writes NaN / Infinity, which json.loads accepts back


def _impossible_compact(**changes: Any) -> str:
    """As Run.record writes a line (compact, fields in order): read index-only, then in full when shown."""
    record = json.loads(_good()[0])
    record.update(case="impossible_case", **changes)
    return json.dumps(record, separators=(",", ":"))


HOSTILE = {
    "not_utf8": b'{"run_id": "\xff\xfe"}',
    "deep_nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep_object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "huge_integer": b'{"repeats": ' + b"9" * 5000 + b"}",
    "huge_integer_in_record": _impossible(repeats=1).replace('"repeats": 1', '"repeats": ' + "7" * 5000).encode(),
    "negative_median": _impossible(median_s=-1.0).encode(),
    "nan_median": _impossible(median_s=float("nan")).encode(),
    "inf_median": _impossible(median_s=float("inf")).encode(),
    "nan_sample": _impossible(samples_s=[1e-3, float("nan"), 1e-3]).encode(),
    "negative_sample": _impossible(samples_s=[1e-3, -1e-3, 1e-3]).encode(),
    "inf_iqr": _impossible(iqr_s=float("inf")).encode(),
    "nested_metric": _impossible(metrics={"gflops": {"a": 1}}).encode(),
    "a_list": b"[1, 2, 3]",
    "compact_negative_median": _impossible_compact(median_s=-1.0).encode(),
    "compact_nan_median": _impossible_compact(median_s=float("nan")).encode(),
    "compact_inf_sample": _impossible_compact(samples_s=[1e-3, float("inf")]).encode(),
    "compact_huge_integer": _impossible_compact(repeats=1).replace('"repeats":1', '"repeats":' + "7" * 5000).encode(),
    "compact_deep_params": _impossible_compact(params={}).replace('"params":{}', '"params":' + "[" * 50_000 + "]" * 50_000).encode(),
    "compact_bad_bytes": _impossible_compact().encode().replace(b'"impossible_case"', b'"impossible_\xff"'),
    "compact_bad_bytes_in_head": _impossible_compact().encode().replace(XLA_NEW.encode(), b"\xfe" + XLA_NEW[1:].encode()),
}


def _write(path: Path, hostile: list[bytes]) -> Path:
    good = [line.encode() for line in _good()]
    path.write_bytes(b"\n".join([good[0], *hostile, *good[1:]]) + b"\n")
    return path


@pytest.mark.parametrize("name", list(HOSTILE))
def test_each_hostile_line_is_skipped_and_never_shown(results_path: Path, name: str) -> None:
    _write(results_path, [HOSTILE[name]])
    result = invoke("report", "--results", str(results_path), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "skipped 1 corrupt or impossible record(s) at line(s) 2 " in warnings[0]
    assert {row["case"] for row in csv.DictReader(io.StringIO(result.stdout))} == GOOD_CASES


def test_many_bad_lines_make_one_summary_with_the_first_line_numbers(results_path: Path) -> None:
    _write(results_path, list(HOSTILE.values()))
    result = invoke("report", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [warnings[0]]
    assert f"skipped {len(HOSTILE)} corrupt or impossible record(s) at line(s) 2, 3, 4, 5, 6 and " \
           f"{len(HOSTILE) - 5} more" in warnings[0]
    assert "impossible_case" not in result.stdout and "-1e+09" not in result.stdout


def test_hostile_baseline_file_is_read_without_traceback(results_path: Path, tmp_path: Path) -> None:
    # Two --rounds runs (5 rounds each): the verdict needs every round's record read back from both files.
    write_results(results_path, xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=1))
    baseline = tmp_path / "baseline.jsonl"
    old = [r.model_dump_json().encode() for r in xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00")]
    baseline.write_bytes(b"\n".join([old[0], b"\xff\xfe binary \x00", HOSTILE["deep_nesting"], *old[1:]]) + b"\n")
    result = invoke("report", "--results", str(results_path), "--baseline", str(baseline), "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert f"{baseline}: skipped 2 corrupt or impossible record(s) at line(s) 2, 3 " in result.stderr
    rows = [row for table in json.loads(result.stdout)["tables"] for row in table["rows"]]
    # Every figure compared round by round: the hostile lines cost the baseline nothing else.
    assert len(rows) == 3 and {row["test"] for row in rows} == {"welch-rounds"}
    assert {row["baseline_run_id"] for row in rows} == {XLA_OLD}


def test_binary_file_as_report_input_is_all_skipped_then_exit_2(results_path: Path) -> None:
    results_path.write_bytes(bytes(range(256)) * 40 + b"\n\x00\x01\n")
    result = invoke("report", "--results", str(results_path))
    assert result.exit_code == 2
    assert "no benchmark records" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("option", ["--results", "--baseline"])
def test_fifo_given_to_report_is_refused_without_hanging(results_path: Path, tmp_path: Path, option: str) -> None:
    write_results(results_path, xla_run(XLA_NEW, "2025-01-02T10:00:00+00:00", jax_matmul_s=1e-3))
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    args = ["--results", str(fifo)] if option == "--results" else ["--results", str(results_path),
                                                                     "--baseline", str(fifo)]
    result = invoke("report", *args)
    assert result.exit_code == 2
    assert f"'{option}'" in result.stderr and "FIFO" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_line_longer_than_the_limit_is_skipped_in_pieces(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A binary file without newlines is never held in memory as one line (limit lowered for a fast test)."""
    from jax_benchmarks.store import jsonl as store

    monkeypatch.setattr(store, "MAX_LINE_BYTES", 4096)
    _write(results_path, [b"x" * 50_000, b"y" * 4095, b"z" * 4096])
    result = invoke("report", "--results", str(results_path), "--format", "csv")
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "skipped 3 corrupt or impossible record(s) at line(s) 2, 3, 4 (first: line 2: a line longer than" \
        in warnings[0]
    assert {row["case"] for row in csv.DictReader(io.StringIO(result.stdout))} == GOOD_CASES
