"""Bad input in the stores a verdict reads: each is one clear line, and nothing in the store changes."""

from __future__ import annotations

from pathlib import Path

from jax_benchmarks.store.record import SCHEMA_VERSION, Record
from tests.conftest import invoke
from tests.verdict.fixtures import figure, matmul


def write(path: Path, records: list[Record]) -> bytes:
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return path.read_bytes()


def versioned(records: list[Record], version: int) -> list[Record]:
    return [r.model_copy(update={"schema_version": version}) for r in records]


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: ")]


def test_mixed_schema_versions_are_said_in_one_line_and_judged(tmp_path: Path) -> None:
    store = tmp_path / "r.jsonl"
    before = write(store, versioned(matmul(numpy_s=0.010, jax_s=0.005), 1)
                   + figure("jit", "jax", "f_1000_float32", 0.001, variant="jit"))
    result = invoke("verdict", "--from", str(store), "--format", "markdown", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert warnings(result.stderr) == [
        f"warning: {store} holds records of schema versions 1, {SCHEMA_VERSION}: those before {SCHEMA_VERSION} lack "
        "the fields added since (version 2: memory), so their findings leave those out"]
    assert "jax is fastest, 2.00× faster than numpy" in result.stdout
    assert store.read_bytes() == before


def test_records_of_a_newer_version_are_left_out_in_one_line_and_kept(tmp_path: Path) -> None:
    store = tmp_path / "r.jsonl"
    newer = versioned(figure("xla", "pytorch", "matmul_1000x1000_float64", 0.001, run_id="20991231T000000Z-ffffff"),
                      SCHEMA_VERSION + 1)
    before = write(store, matmul(numpy_s=0.010, jax_s=0.005) + newer)
    result = invoke("verdict", "--from", str(store), "--format", "markdown", "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert warnings(result.stderr) == [
        f"warning: 3 record(s) in {store} (run(s) 20991231T000000Z-ffffff) were written by a newer jax-benchmarks "
        f"(record schema {SCHEMA_VERSION + 1}; this one reads up to {SCHEMA_VERSION}): left out of the verdict, "
        "still in the store"]
    assert "pytorch" not in result.stdout.split("### Findings")[1].split("memory")[0]
    assert store.read_bytes() == before  # nothing lost


def test_a_store_of_newer_records_only_is_one_line_exit_2(tmp_path: Path) -> None:
    store = tmp_path / "r.jsonl"
    before = write(store, versioned(matmul(numpy_s=0.010, jax_s=0.005), SCHEMA_VERSION + 1))
    result = invoke("verdict", "--from", str(store))
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"Error: every record in {store} was written by a newer jax-benchmarks (record schema {SCHEMA_VERSION + 1}; "
        f"this one reads up to {SCHEMA_VERSION}): update jax-benchmarks to judge them"]
    assert store.read_bytes() == before


def test_a_machine_with_no_records_for_a_group_says_so_in_one_line(tmp_path: Path) -> None:
    store = tmp_path / "r.jsonl"
    write(store, matmul(numpy_s=0.010, jax_s=0.005))
    result = invoke("verdict", "--from", str(store), "--format", "markdown", "-o", "-")
    assert result.exit_code == 0, result.stderr
    for group in ("jit", "autograd", "scipy", "mnist"):
        [line] = [row for row in result.stdout.splitlines() if f"No {group} records" in row]
        assert f"No {group} records: " in line
