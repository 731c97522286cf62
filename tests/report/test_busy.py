"""A figure taken on a busy machine is marked in every format of `report`, with one line saying what was busy."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.report.fixtures import XLA_NEW, record, samples, write_results

TS = "2025-01-02T10:00:00+00:00"
BUSY = {"window_s": 0.5, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}
QUIET = {"window_s": 0.5, "busy": False, "cores": 2, "others_cores": 0.1, "steal_cores": 0.0}
UNKNOWN = {"window_s": 0.5, "busy": False, "unknown": "/proc/stat is hidden on this machine"}
LINE = "1 of 3 figures taken on a busy machine (other processes took 0.5 cores or more); " \
       "at worst other processes took 1.6 of 2 cores: threads beyond what is left wait for cores, --threads 1 fits"
NOTE = f"busy: {LINE}; a busy figure is not ranked (no ×N, no fastest)"


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


@pytest.fixture
def busy_results(results_path: Path) -> Path:
    return write_results(results_path, [
        record(XLA_NEW, TS, "xla", "numpy", "matmul_10x10_float64", samples(1e-3), contention=QUIET),
        record(XLA_NEW, TS, "xla", "jax", "matmul_10x10_float64", samples(3e-3), contention=BUSY),
        record(XLA_NEW, TS, "xla", "pytorch", "matmul_10x10_float64", samples(2e-3), contention=UNKNOWN),
    ])


def test_table_and_markdown_mark_the_busy_figure_and_say_why(busy_results: Path) -> None:
    """The busy figure is shown with 'busy' on its row, never ranked: the quiet ones are ranked among themselves."""
    table = invoke("report", "--results", str(busy_results)).stdout
    assert "3 ms ± 60 µs busy" in table and "1 ms ± 20 µs (fastest) " in table and "2 ms ± 40 µs ×2.00" in table
    assert "×3.00" not in table and "×1.50" not in table
    assert NOTE in " ".join(table.split())
    assert "contention unknown for 1 of 3 figures: /proc/stat is hidden on this machine" in " ".join(table.split())
    md = invoke("report", "--results", str(busy_results), "--markdown").stdout
    assert "| 3 ms ± 60 µs busy |" in md and NOTE in md and "×3.00" not in md


def test_json_and_csv_carry_the_contention(busy_results: Path) -> None:
    data = json.loads(invoke("report", "--results", str(busy_results), "--format", "json").stdout)
    table = data["tables"][0]
    assert table["contention"][0] == NOTE
    rows = {row["backend"]: row for row in table["rows"]}
    assert rows["jax"]["ratio_to_fastest"] is None and rows["pytorch"]["ratio_to_fastest"] == 2.0
    assert rows["jax"]["busy"] is True and rows["jax"]["others_cores"] == 1.6 and rows["jax"]["contention"] == BUSY
    assert rows["numpy"]["busy"] is False and rows["pytorch"]["contention_unknown"] == UNKNOWN["unknown"]
    lines = list(csv.DictReader(io.StringIO(invoke("report", "--results", str(busy_results), "--format", "csv").stdout)))
    assert {line["backend"]: line["busy"] for line in lines} == {"numpy": "False", "jax": "True", "pytorch": "False"}


def test_html_marks_the_busy_cell(busy_results: Path, tmp_path: Path) -> None:
    page = invoke("report", "--results", str(busy_results), "--format", "html").stdout
    assert 'class="num busy"' in page and LINE in page
    assert "3 ms ± 60 µs busy</td>" in page and "×3.00" not in page


def test_records_without_contention_show_no_mark(results_path: Path) -> None:
    write_results(results_path, [record(XLA_NEW, TS, "xla", "numpy", "matmul_10x10_float64", samples(1e-3)),
                                 record(XLA_NEW, TS, "xla", "jax", "matmul_10x10_float64", samples(3e-3))])
    table = invoke("report", "--results", str(results_path)).stdout
    assert "busy" not in table and "contention" not in table


def test_the_gate_does_not_judge_busy_figures_and_says_why(results_path: Path) -> None:
    from tests.report.fixtures import XLA_OLD, xla_rounds

    slow = xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", {"matmul_100x100_float64": 3.0}, seed=2)
    busy = [r.model_copy(update={"contention": BUSY}) if r.case == "matmul_100x100_float64" else r for r in slow]
    write_results(results_path, [*xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1), *busy])
    result = invoke("report", "--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert result.exit_code == 2, result.stderr  # never a pass, never a claimed regression
    assert "1 of 3 figure(s) were taken on a busy machine and not judged (other processes took 1.6 of 2 cores)" \
        in result.stderr
    assert "Error: regression" not in result.stderr and "figure(s) slower" not in result.stderr
    assert "busy machine" in result.stdout


def test_the_gate_says_how_many_rounds_its_threshold_needs(results_path: Path) -> None:
    from tests.report.fixtures import XLA_OLD, xla_rounds

    write_results(results_path, [*xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", seed=1),
                                 *xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2)])
    result = invoke("report", "--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert result.exit_code == 0, result.stderr
    assert "--fail-on-regression 10 % needs 3 round(s) a side on this machine for the median figure" in result.stderr
    tight = invoke("report", "--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "0.5")
    assert "warning: --fail-on-regression 0.5 % is below what these rounds resolve for 3 of 3 figure(s)" in tight.stderr


def test_calibrate_prints_false_alarms_and_detectable_change(results_path: Path) -> None:
    from tests.report.fixtures import xla_rounds

    write_results(results_path, xla_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", seed=2, rounds=10))
    result = invoke("report", "--results", str(results_path), "--calibrate", "--fail-on-regression", "5")
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("xla matmul_100x100_float64 numpy")]
    assert len(lines) == 1 and "A/A splits" in lines[0] and "5 rounds a side detect a slowdown of" in lines[0]
    data = json.loads(invoke("report", "--results", str(results_path), "--calibrate", "--format", "json").stdout)
    assert {row["splits"] for row in data["calibration"]} == {200}
    assert all(0 <= row["false_alarm_rate"] <= 1 for row in data["calibration"])
