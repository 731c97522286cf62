"""`report --history`: every figure over the runs, labelled by commit and the versions that changed."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from jax_benchmarks.store.record import Record
from jax_benchmarks.report.history import build_histories, group_history
from tests.conftest import invoke
from tests.report.fixtures import XLA_NEW, XLA_OLD, all_records, write_results, xla_run

JAX_011 = "20250103T100000Z-eeeeee"


def upgraded_run() -> list[Record]:
    """A third xla run on jax 0.11.0 at another commit: the jax matmul got slower again."""
    return [r.model_copy(update={"env": {**r.env, "jax": "0.11.0", "jaxlib": "0.11.0", "git_commit": "fedcba987654"}})
            for r in xla_run(JAX_011, "2025-01-03T10:00:00+00:00", jax_matmul_s=2e-3)]


@pytest.fixture
def results(results_path: Path) -> Path:
    return write_results(results_path, [*all_records(), *upgraded_run()])


def test_runs_are_labelled_by_commit_and_the_versions_that_changed() -> None:
    (history,) = build_histories([r for r in [*all_records(), *upgraded_run()] if r.group == "xla"], ["xla"])
    assert [run.run_id for run in history.runs] == [XLA_OLD, XLA_NEW, JAX_011]
    assert history.varying == ["git_commit", "jax", "jaxlib"]
    assert [history.label(run) for run in history.runs] == [
        "2025-01-01 10:00 · 0123456 · jax 0.10.2 · jaxlib 0.10.2",
        "2025-01-02 10:00 · 0123456 · jax 0.10.2 · jaxlib 0.10.2",
        "2025-01-03 10:00 · fedcba9 · jax 0.11.0 · jaxlib 0.11.0",
    ]


def test_same_versions_label_only_date_and_commit() -> None:
    history = group_history([r for r in all_records() if r.group == "xla"])
    assert history.varying == []
    assert history.label(history.runs[0]) == "2025-01-01 10:00 · 0123456"
    assert "the same library versions in every run" in history.legend


def test_each_figure_has_one_point_per_run() -> None:
    history = group_history([r for r in [*all_records(), *upgraded_run()] if r.group == "xla"])
    assert [(s.case, s.column) for s in history.series][:3] == [
        ("matmul_100x100_float64", "numpy"), ("matmul_100x100_float64", "pytorch"),
        ("matmul_100x100_float64", "jax")]
    jax_matmul = history.series[2]
    assert [jax_matmul.points[run.run_id].median_s for run in history.runs] == pytest.approx([5e-4, 1.2e-3, 2e-3])


def test_markdown_answers_did_the_upgrade_make_it_slower(results: Path) -> None:
    result = invoke("report", "--results", str(results), "--history", "--group", "xla", "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "### xla · history over 3 run(s)"
    header = next(line for line in lines if line.startswith("| figure"))
    assert header.endswith("| 2025-01-03 10:00 · fedcba9 · jax 0.11.0 · jaxlib 0.11.0 | last vs first |")
    assert "| matmul_100x100_float64 · jax | 500 µs | 1.2 ms | 2 ms | +300.0 % |" in lines
    assert "| inv_100x100_float64 · numpy | 4 ms | 4 ms | 4 ms | +0.0 % |" in lines


def test_table_json_and_csv(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    table = invoke("report", "--results", str(results), "--history", "--backend", "jax")
    assert table.exit_code == 0, table.stderr
    assert "xla · history over 3 run(s)" in table.stdout and "+300.0 %" in table.stdout
    data = json.loads(invoke("report", "--results", str(results), "--history", "--format", "json").stdout)
    xla = data["histories"][0]
    assert xla["group"] == "xla" and xla["varying"] == ["git_commit", "jax", "jaxlib"]
    assert [run["env"]["jax"] for run in xla["runs"]] == ["0.10.2", "0.10.2", "0.11.0"]
    assert [h["group"] for h in data["histories"]] == ["xla", "jit", "mnist"]
    rows = list(csv.DictReader(io.StringIO(
        invoke("report", "--results", str(results), "--history", "--format", "csv").stdout)))
    jax_matmul = [r for r in rows if r["case"] == "matmul_100x100_float64" and r["column"] == "jax"]
    assert [(r["env.jax"], float(r["median_s"])) for r in jax_matmul] == [
        ("0.10.2", 5e-4), ("0.10.2", 1.2e-3), ("0.11.0", 2e-3)]


def test_a_narrow_terminal_shows_the_first_and_latest_runs(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long history does not fit side by side: the table shows the first run and the latest that fit, says
    so, and its last column still compares the latest run with the first."""
    monkeypatch.setenv("COLUMNS", "100")
    table = invoke("report", "--results", str(results), "--history", "--group", "xla")
    assert table.exit_code == 0, table.stderr
    out = table.stdout
    # (the caption wraps at the table's width: read with its lines joined)
    assert "xla · history over 3 run(s)" in out and "the first and the latest 1 of 3 runs" in " ".join(out.split())
    assert "2025-01-01 10:00" in out and "2025-01-03 10:00" in out and "2025-01-02 10:00" not in out
    assert "+300.0 %" in out and "500 µs" in out and "1.2 ms" not in out  # the middle run's jax matmul
    assert "\\n" not in out and max(len(line) for line in out.splitlines()) <= 100  # labels one part a line
    monkeypatch.setenv("COLUMNS", "250")
    wide = invoke("report", "--results", str(results), "--history", "--group", "xla").stdout
    assert "2025-01-02 10:00" in wide and "1.2 ms" in wide and "Shown:" not in wide


def test_history_plot_is_written(results: Path, tmp_path: Path) -> None:
    result = invoke("report", "--results", str(results), "--history", "--group", "xla", "--plot")
    assert result.exit_code == 0, result.stderr
    assert "chart: data/plots/xla_history.png" in result.stdout
    assert (tmp_path / "data/plots/xla_history.png").read_bytes()[:4] == b"\x89PNG"


def test_html_history_with_run_still_draws_every_run(results: Path) -> None:
    """--run picks the tables of the page; the history next to them still spans all runs of the group."""
    result = invoke("report", "--results", str(results), "--history", "--group", "xla", "--run", XLA_OLD,
                    "--format", "html")
    assert result.exit_code == 0, result.stderr
    assert "xla · history over 3 run(s)" in result.stdout
    assert "jax 0.11.0" in result.stdout  # the newest run is in the history though --run names the oldest
