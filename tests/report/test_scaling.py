"""`report --scaling`: images/s by process count against the 1-process run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jax_benchmarks.store.record import Record

from jax_benchmarks.store.jsonl import append_record
from jax_benchmarks.report.scaling import scaling_rows
from tests.conftest import invoke


def epoch(run_id: str, images_per_s: float, *, processes: int = 1, process: int = 0, devices: int = 1,
          backend: str = "pytorch", batch: int = 128, stamp: str = "2026-01-01T00:00:00+00:00") -> Record:
    return Record(
        run_id=run_id, timestamp=stamp, group="mnist", backend=backend, case="train_epoch", device="cpu",
        params={"dataset": "mnist", "batch": batch, "devices": devices, "world_size": processes,
                "process_index": process},
        metrics={"images_per_s": images_per_s},
    )


def test_speedup_and_efficiency_against_the_latest_one_process_run() -> None:
    records = [
        epoch("old1", 50.0, stamp="2025-01-01T00:00:00+00:00"),  # an older 1-process run: not the baseline
        epoch("one", 100.0), epoch("one", 120.0), epoch("one", 110.0),
        epoch("two", 180.0, processes=2), epoch("two", 999.0, processes=2, process=1),  # process 1: not counted
        epoch("two", 170.0, processes=2),
        epoch("big", 100.0, batch=64),  # another setup: its own baseline
    ]
    rows = {(r.batch, r.processes): r for r in scaling_rows(records)}
    one, two = rows[(128, 1)], rows[(128, 2)]
    assert (one.run_id, one.images_per_s, one.speedup, one.efficiency) == ("one", 110.0, 1.0, 1.0)
    assert (two.run_id, two.images_per_s, two.epochs) == ("two", 175.0, 2)
    assert two.speedup == pytest.approx(175 / 110)
    assert two.efficiency == pytest.approx(175 / 220)
    assert rows[(64, 1)].speedup == 1.0


def test_without_a_one_process_run_there_is_no_ratio() -> None:
    (row,) = scaling_rows([epoch("two", 180.0, processes=2)])
    assert row.speedup is None and row.efficiency is None


def test_report_scaling_prints_the_view(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    for record in (epoch("one", 100.0), epoch("two", 150.0, processes=2)):
        append_record(results, record)
    table = invoke("report", "--scaling", "--results", str(results))
    assert table.exit_code == 0, table.output
    assert "0.75" in table.stdout and "1.50×" in table.stdout
    data = invoke("report", "--scaling", "--format", "json", "--results", str(results))
    assert [row["efficiency"] for row in json.loads(data.stdout)] == [1.0, 0.75]


def test_report_scaling_without_training_records_is_a_clear_error(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    append_record(results, Record(run_id="x", timestamp="t", group="xla", backend="jax", case="c", device="cpu"))
    result = invoke("report", "--scaling", "--results", str(results))
    assert result.exit_code == 2 and "no records for group 'mnist'" in result.stderr
    append_record(results, Record(run_id="y", timestamp="t", group="mnist", backend="flax", case="data_load",
                                  device="cpu"))
    result = invoke("report", "--scaling", "--results", str(results))
    assert result.exit_code == 2 and "no mnist training epochs" in result.stderr


BUSY = {"window_s": 0.5, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}


@pytest.mark.parametrize("busy_run", ["one", "two"])
def test_a_busy_run_or_baseline_gets_no_speed_up(busy_run: str, tmp_path: Path) -> None:
    """A speed-up to or from epochs taken on a busy machine is not printed: 'busy' stands in its place."""
    made = [epoch("one", 100.0), epoch("two", 150.0, processes=2)]
    made = [r.model_copy(update={"contention": BUSY}) if r.run_id == busy_run else r for r in made]
    rows = {row.processes: row for row in scaling_rows(made)}
    assert rows[2].busy and rows[2].speedup is None and rows[2].efficiency is None
    results = tmp_path / "r.jsonl"
    for record in made:
        append_record(results, record)
    table = invoke("report", "--scaling", "--results", str(results)).stdout
    assert "1.50×" not in table and "0.75" not in table and "busy" in table


@pytest.mark.parametrize("columns", ["250", "80", "60"])
def test_the_scaling_table_keeps_setups_and_run_ids_whole(columns: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    results = tmp_path / "r.jsonl"
    for record in (epoch("20260101T000000Z-aaaaaa", 100.0), epoch("20260101T000000Z-bbbbbb", 150.0, processes=2)):
        append_record(results, record)
    table = invoke("report", "--scaling", "--results", str(results)).stdout
    assert max(len(line) for line in table.splitlines()) <= int(columns), table
    assert "20260101T000000Z-aaaaaa" in table and "20260101T000000Z-bbbbbb" in table and "…" not in table
    assert "cpu · mnist · batch 128" in " ".join(table.split()) and "1.50×" in table


def test_the_training_epochs_are_those_a_group_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    """The view reads which group trains, and which cases are its epochs, from the groups' declarations
    (`training_epochs` on a group's entry in jax_benchmarks.groups), never from a group's name."""
    from jax_benchmarks.groups import GROUPS, GroupEntry

    other = epoch("other", 90.0).model_copy(update={"group": "speech", "case": "fit_epoch_32"})
    assert [row.run_id for row in scaling_rows([epoch("one", 100.0), other])] == ["one"]
    monkeypatch.setitem(GROUPS, "speech", GroupEntry("speech.cli", "A stand-in group.", training_epochs="fit_epoch"))
    monkeypatch.setitem(GROUPS, "mnist", GROUPS["mnist"]._replace(training_epochs=None))
    assert [row.run_id for row in scaling_rows([epoch("one", 100.0), other])] == ["other"]
