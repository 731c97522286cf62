"""`report --format github-benchmark`: github-action-benchmark's customSmallerIsBetter JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.report.fixtures import XLA_NEW, record, write_results


def test_one_entry_per_timed_figure_in_seconds(results: Path) -> None:
    result = invoke("report", "--results", str(results), "--format", "github-benchmark", "--group", "xla")
    assert result.exit_code == 0, result.stderr
    entries = json.loads(result.stdout)
    # The action requires name, unit and value; range and extra are shown in its tooltips.
    assert all(set(e) == {"name", "unit", "value", "range", "extra"} for e in entries)
    assert [e["name"] for e in entries] == [
        f"xla/{case}/{backend}" for case in ("matmul_100x100_float64", "inv_100x100_float64")
        for backend in ("numpy", "pytorch", "jax")]
    jax_matmul = entries[2]
    assert jax_matmul["unit"] == "s" and jax_matmul["value"] == pytest.approx(1.2e-3)
    assert jax_matmul["range"].startswith("± ") and float(jax_matmul["range"][2:]) > 0
    assert f"run {XLA_NEW} · 10 samples" in jax_matmul["extra"]
    assert "jax 0.10.2" in jax_matmul["extra"] and "git 0123456789ab" in jax_matmul["extra"]


def test_noisy_and_untimed_figures(results_path: Path) -> None:
    timed = record("r1", "2025-01-01T00:00:00+00:00", "jit", "jax", "selu_10_float32", [1.0, 1.5, 0.8, 1.4],
                   noisy=True)
    untimed = record("r1", "2025-01-01T00:00:00+00:00", "jit", "numpy", "parity_float32", [1.0]).model_copy(
        update={"median_s": None})
    write_results(results_path, [timed, untimed])
    result = invoke("report", "--results", str(results_path), "--format", "github-benchmark")
    (entry,) = json.loads(result.stdout)
    assert entry["name"] == "jit/selu_10_float32/jax" and "noisy" in entry["extra"]


def test_history_has_no_github_benchmark_form(results: Path) -> None:
    result = invoke("report", "--results", str(results), "--format", "github-benchmark", "--history")
    assert result.exit_code == 2 and "'--history'" in result.stderr
