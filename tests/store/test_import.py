"""The JSON-lines file of earlier versions (data/results/results.jsonl) is imported into the default SQLite
store once, automatically, with nothing lost; the file stays as it was. Where the store is told by
$JAX_BENCHMARKS_RESULTS, and a location's password is never shown."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.store.location import ResultsLocation, open_store
from jax_benchmarks.store.record import Record
from jax_benchmarks.store.sql import STORE_SCHEMA
from jax_benchmarks.store.sqlite import SqliteStore
from tests.conftest import invoke

REPO = Path(__file__).resolve().parents[2]
# Written by `python main.py xla numpy --matrix-size 64 --repeats 3 --results FILE.jsonl` before the
# SQLite store existed (record schema 1).
WRITTEN_BY_V1 = Path(__file__).parent / "fixtures" / "written_by_v1.jsonl"
DEFAULT_JSONL = Path("data/results/results.jsonl")
DEFAULT_SQLITE = Path("data/results/results.sqlite")


@pytest.fixture(autouse=True)
def _in_a_checkout(tmp_path: Path) -> None:
    """The working directory (tmp_path) as a checkout of this project: its default store is
    data/results/results.sqlite there, where earlier versions wrote data/results/results.jsonl."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "jax-benchmarks"\n')


def legacy_lines() -> list[str]:
    """The real file's lines; one written before records had a schema_version; one with a field this
    version does not know (a later version's); a corrupt line (a kill mid-write long ago)."""
    lines = WRITTEN_BY_V1.read_text().splitlines()
    unversioned = json.loads(lines[0])
    del unversioned["schema_version"]
    unversioned["run_id"] = "20240101T000000Z-000000"
    later = {**json.loads(lines[1]), "memory": {"peak_rss_mib": 123.5}}
    return [*lines, json.dumps(unversioned), json.dumps(later), lines[2][:100]]


def exported() -> list[dict[str, object]]:
    result = invoke("report", "--format", "jsonl")
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_old_file_is_imported_once_with_nothing_lost() -> None:
    DEFAULT_JSONL.parent.mkdir(parents=True)
    lines = legacy_lines()
    DEFAULT_JSONL.write_text("\n".join(lines) + "\n")
    before = DEFAULT_JSONL.read_bytes()

    first = invoke("report", "--format", "jsonl")
    assert first.exit_code == 0, first.stderr
    assert f"imported 8 records from {DEFAULT_JSONL} into {DEFAULT_SQLITE}" in first.stderr
    assert "skipped 1 corrupt or impossible record(s) at line(s) 9" in first.stderr
    assert DEFAULT_SQLITE.exists() and DEFAULT_JSONL.read_bytes() == before  # the old file is kept as it was
    records = [json.loads(line) for line in first.stdout.splitlines()]
    assert len(records) == 8
    for line, record in zip(lines[:8], records):
        original = json.loads(line)
        original.setdefault("schema_version", 0)  # how every version reads a line written before versions
        assert {key: record[key] for key in original} == original  # every field, every value, every sample
    assert records[7]["memory"] == {"peak_rss_mib": 123.5}  # a field added later passes through

    # Records written by today's code read the same from the file and from the store.
    assert invoke("report", "--format", "json").stdout == invoke(
        "report", "--format", "json", "--results", str(DEFAULT_JSONL)).stdout.replace(str(DEFAULT_JSONL), str(DEFAULT_SQLITE))

    # The lines as Run.record writes them have their samples kept apart; the two that json.dumps wrote
    # (a space after each separator) are kept whole.
    store = SqliteStore(DEFAULT_SQLITE)
    try:
        cur = store.cursor()
        cur.execute("SELECT id FROM records WHERE samples IS NULL ORDER BY id")
        assert [row[0] for row in cur.fetchall()] == [7, 8]
    finally:
        store.close()

    again = invoke("report", "--format", "jsonl")
    assert "imported" not in again.stderr and again.stdout == first.stdout  # once: nothing doubled
    store = SqliteStore(DEFAULT_SQLITE)
    try:
        mark = json.loads(store.meta(f"imported {DEFAULT_JSONL.resolve()}") or "{}")
        assert mark["records"] == 8 and mark["skipped"] == 1 and mark["bytes"] == len(before)
        assert store.meta("schema") == str(STORE_SCHEMA)
    finally:
        store.close()


def test_an_import_into_postgresql_reads_as_the_file(pg_url: str) -> None:
    Path("history.jsonl").write_text("\n".join(legacy_lines()) + "\n")
    store = open_store(pg_url)
    try:
        note = getattr(store, "import_jsonl")(Path("history.jsonl"))
        assert note.records == 8 and "line(s) 9" in note.skipped
        assert getattr(store, "import_jsonl")(Path("history.jsonl")) is None  # once
        store.append(Record.model_validate_json(WRITTEN_BY_V1.read_text().splitlines()[0]))  # ids go on
    finally:
        store.close()
    from_db = invoke("report", "--results", pg_url, "--format", "jsonl").stdout.splitlines()
    from_file = invoke("report", "--results", "history.jsonl", "--format", "jsonl").stdout.splitlines()
    assert len(from_db) == 9 and from_db[:8] == from_file


def test_a_new_postgresql_store_keeps_bodies_uncompressed(pg_url: str) -> None:
    store = open_store(pg_url)
    try:
        cur = getattr(store, "cursor")()
        cur.execute("SELECT attname, attstorage FROM pg_attribute WHERE attrelid = 'records'::regclass "
                    "AND attname IN ('body', 'samples') ORDER BY attname")
        assert cur.fetchall() == [("body", "e"), ("samples", "e")]  # EXTERNAL: out of line, not compressed
    finally:
        store.close()
    open_store(pg_url).close()  # opened again: the statement ran once, when the tables were created


def test_new_runs_go_to_the_store_and_read_with_the_imported_ones() -> None:
    DEFAULT_JSONL.parent.mkdir(parents=True)
    DEFAULT_JSONL.write_text(WRITTEN_BY_V1.read_text())
    before = DEFAULT_JSONL.read_bytes()
    run = invoke("xla", "numpy", "--matrix-size", "32", "--repeats", "1", "--min-time", "0.01", "--case", "matmul")
    assert run.exit_code == 0, run.stderr
    assert DEFAULT_JSONL.read_bytes() == before
    records = exported()
    assert len(records) == 7 and len({r["run_id"] for r in records}) == 2
    assert str(records[-1]["case"]).startswith("matmul_32x32")


def test_the_environment_variable_names_the_default_store(tmp_path: Path) -> None:
    team = tmp_path / "team.jsonl"
    team.write_text(WRITTEN_BY_V1.read_text())
    env = {**os.environ, "JAX_BENCHMARKS_RESULTS": str(team)}
    done = subprocess.run([sys.executable, str(REPO / "main.py"), "report", "--format", "jsonl"], env=env,
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 6 and not (tmp_path / "data").exists()


def test_a_password_is_never_shown(tmp_path: Path) -> None:
    secret = "s3cr3t-p4ss"
    url = f"postgresql://bench:{secret}@127.0.0.1:1/db?sslmode=disable"
    assert secret not in str(ResultsLocation(url)) and "bench:***@127.0.0.1:1/db" in str(ResultsLocation(url))
    assert secret not in str(ResultsLocation(f"postgres://h/db?password={secret}"))
    env = {**os.environ, "JAX_BENCHMARKS_RESULTS": url}
    helps = [subprocess.run([sys.executable, str(REPO / "main.py"), *command, "--help"], env=env,
                            capture_output=True, text=True, timeout=120, cwd=tmp_path) for command in
             (("report",), ("xla", "numpy"))]
    for done in helps:
        assert done.returncode == 0 and "bench:***@127.0.0.1:1/db" in "".join(done.stdout.split())
        assert secret not in done.stdout + done.stderr


def test_a_json_lines_file_under_another_name_stays_json_lines() -> None:
    Path("results.json").write_text(WRITTEN_BY_V1.read_text())
    result = invoke("report", "--results", "results.json", "--format", "jsonl")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 6
    assert ResultsLocation("results.json").kind == "jsonl" and ResultsLocation("new.json").kind == "sqlite"


def test_the_full_url_goes_to_the_processes_a_run_starts() -> None:
    from jax_benchmarks.settings import BenchSettings, command_line

    url = "postgresql://bench:s3cr3t@127.0.0.1:1/db"
    settings = BenchSettings.model_validate({}).model_copy(update={"results": ResultsLocation(url)})
    args = command_line(settings)
    assert args[args.index("--results") + 1] == url


def test_a_file_that_is_no_store_is_refused_in_one_line() -> None:
    Path("notes.txt").write_text("hello\n")
    result = invoke("report", "--results", "notes.txt")
    assert result.exit_code == 2 and "not an SQLite database" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    try:
        open_store("notes.txt")
    except Exception as exc:  # noqa: BLE001 - the type is checked next
        assert type(exc).__name__ == "StoreError"
    else:
        raise AssertionError("an SQLite store opened a text file")
