"""The xla memory floor: the memory in use at a case's peak holds at least its matrices."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from jax_benchmarks.cli.root import cli
from jax_benchmarks.store.jsonl import read_records
from jax_benchmarks.xla.checks import memory_floor

MIB = 2**20


def test_a_figure_at_or_above_the_floor_passes() -> None:
    fields, failures = memory_floor({"host_held_bytes": 100 * MIB, "host_peak_bytes": 8 * MIB}, 24 * MIB, "cpu")
    assert fields == {"memory_floor_bytes": 24 * MIB, "memory_floor_ok": True} and failures == []


def test_a_figure_below_the_floor_fails() -> None:
    # E.g. VmHWM read as kB but not multiplied: 1/1024 of the truth.
    fields, failures = memory_floor({"host_held_bytes": 100 * 1024, "host_peak_bytes": 8 * 1024}, 24 * MIB, "cpu")
    assert fields["memory_floor_ok"] is False
    assert len(failures) == 1 and "below" in failures[0] and "24 MiB" in failures[0]


def test_on_a_gpu_the_device_figure_is_judged() -> None:
    memory = {"host_held_bytes": 1, "host_peak_bytes": 0, "device_held_bytes": 16 * MIB, "device_peak_bytes": 8 * MIB}
    assert memory_floor(memory, 24 * MIB, "gpu")[1] == []
    assert memory_floor(memory, 25 * MIB, "gpu")[1] != []


def test_no_figure_no_judgement() -> None:
    assert memory_floor({"host_status": "unavailable: no /proc"}, 24 * MIB, "cpu") == ({}, [])


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="reads Linux's /proc/self")
def test_xla_numpy_records_the_floor_of_every_case(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    outcome = CliRunner().invoke(cli, ["xla", "numpy", "--device", "cpu", "--matrix-size", "600", "--repeats", "1",
                                       "--min-time", "0.01", "--results", str(results)])
    assert outcome.exit_code == 0, outcome.output
    records = {r.case.split("_")[0]: r for r in read_records(results, print)}
    n2 = 600 * 600 * 8
    assert records["matmul"].checks["memory_floor_bytes"] == 3 * n2
    assert records["uniform"].checks["memory_floor_bytes"] == 2 * n2
    assert all(r.checks["memory_floor_ok"] is True for r in records.values())
    # The product and the pair are new allocations: their peaks above what was held show them.
    assert records["matmul"].memory["host_peak_bytes"] >= n2 - 64 * 1024  # type: ignore[operator]
    assert records["uniform"].memory["host_peak_bytes"] >= 2 * n2 - 64 * 1024  # type: ignore[operator]
