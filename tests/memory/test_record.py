"""The record's `memory` field: version 2, before env, older records still read."""

from __future__ import annotations

import json
from pathlib import Path

from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records
from jax_benchmarks.store.record import SCHEMA_VERSION, Record, parse_record


def test_memory_is_recorded_before_env_in_version_2(tmp_path: Path) -> None:
    run = Run("test", tmp_path / "results.jsonl")
    run.record(backend="numpy", case="c", device="cpu", memory={"host_peak_bytes": 4096, "host_status": "measured"})
    line = (tmp_path / "results.jsonl").read_text()
    keys = list(json.loads(line))
    assert SCHEMA_VERSION == 2
    assert keys[-1] == "env" and keys[-2] == "memory"
    (record,) = read_records(tmp_path / "results.jsonl", print)
    assert record.memory == {"host_peak_bytes": 4096, "host_status": "measured"}
    (indexed,) = read_records(tmp_path / "results.jsonl", print, index_only=True)
    assert indexed.group == "test"


def test_a_record_written_before_memory_existed_reads_with_none() -> None:
    old = {"schema_version": 1, "run_id": "r", "timestamp": "t", "group": "xla", "backend": "numpy",
           "case": "c", "device": "cpu", "median_s": 1.0, "env": {}}
    record = parse_record(json.dumps(old).encode())
    assert record.memory == {} and record.schema_version == 1


def test_memory_takes_only_scalars() -> None:
    bad = {"run_id": "r", "timestamp": "t", "group": "xla", "backend": "numpy", "case": "c", "device": "cpu",
           "memory": {"host_peak_bytes": [1, 2]}}
    try:
        parse_record(json.dumps(bad).encode())
    except ValueError as exc:
        assert "memory" in str(exc)
    else:
        raise AssertionError("a list in memory was accepted")
    assert Record.model_fields["memory"].default_factory is dict
