"""No torn or lost record in the SQLite store or in PostgreSQL: kill -9 during writes, 2 and 8 processes
writing at once, and a full disk (a file-size limit: the writes past it fail as on a full disk)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jax_benchmarks.store.location import open_store
from tests.store.conftest import start_server, stop_server

SRC = Path(__file__).resolve().parents[2] / "src"
SAMPLES = 200
# One writer process: appends COUNT records of run NAME (cases case_0, case_1, ...), printing each index
# once the append returned; on a failed write, prints the error and exits 3. A fifth argument, where given, caps
# the size of any file the writer grows (RLIMIT_FSIZE, set by the writer itself: a `preexec_fn` would make
# subprocess fork the test's process, which JAX, loaded by other tests, warns against with threads running).
WRITER = f"""
import random, resource, signal, sys
if len(sys.argv) > 5:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[5]), int(sys.argv[5])))
sys.path.insert(0, {str(SRC)!r})
from jax_benchmarks.errors import ResultsWriteError
from jax_benchmarks.store.location import open_store
from jax_benchmarks.store.record import Record
location, name, count, samples = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = open_store(location)
for i in range(count):
    record = Record(run_id=name, timestamp=f"2025-01-01T00:{{i // 60 % 60:02d}}:{{i % 60:02d}}+00:00", group="xla",
                    backend="numpy", case=f"case_{{i}}", device="cpu", median_s=1e-3, repeats=samples,
                    samples_s=[random.random() * 1e-3 for _ in range(samples)], env={{"host": name}})
    try:
        store.append(record)
    except ResultsWriteError as exc:
        print("failed:", exc, flush=True)
        sys.exit(3)
    print(i, flush=True)
"""


def writer(location: str, name: str, count: int, samples: int = SAMPLES,
           file_size_limit: int | None = None) -> subprocess.Popen[str]:
    limit = [] if file_size_limit is None else [str(file_size_limit)]
    return subprocess.Popen([sys.executable, "-c", WRITER, location, name, str(count), str(samples), *limit],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def acknowledged(lines: Iterator[str] | list[str]) -> int:
    return sum(1 for line in lines if line.strip().isdigit())


def check_run(location: str, name: str, at_least: int, at_most: int) -> int:
    """The run's records are whole (every sample there), in order, without a gap; their number is
    within the bounds; the store's run views agree with its records. Returns the number."""
    store = open_store(location)
    try:
        records = store.run_records(name)
        assert store.warnings() == []  # no record failed to parse: none is torn
        assert at_least <= len(records) <= at_most
        assert [r.case for r in records] == [f"case_{i}" for i in range(len(records))]
        assert all(len(r.samples_s) == r.repeats for r in records)
        if records:
            assert store.latest_run("xla", None) is not None
            assert [r.case for r in store.history("xla", "numpy") if r.run_id == name] == [r.case for r in records]
    finally:
        store.close()
    if not location.startswith("postgres"):
        with sqlite3.connect(location) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    return len(records)


def test_kill_9_during_writes_leaves_no_torn_or_lost_record(location: str) -> None:
    child = writer(location, "killed", 100_000)
    assert child.stdout is not None
    acked = []
    for line in child.stdout:
        acked.append(line)
        if len(acked) == 25:
            child.send_signal(signal.SIGKILL)
            break
    rest = child.stdout.read()
    child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    done = acknowledged(acked + rest.splitlines())
    # Every acknowledged record is there; the one being written when the kill came is whole or absent.
    check_run(location, "killed", done, done + 1)


@pytest.mark.parametrize("processes", [2, 8])
def test_concurrent_writers_lose_nothing(location: str, processes: int) -> None:
    count = 20
    children = [writer(location, f"writer{n}", count) for n in range(processes)]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        assert acknowledged(out.splitlines()) == count
    for n in range(processes):
        check_run(location, f"writer{n}", count, count)
    store = open_store(location)
    try:
        assert sum(1 for _ in store.all_records()) == processes * count
        assert set(store.latest_run_ids(processes)) == {f"writer{n}" for n in range(processes)}
    finally:
        store.close()


def test_a_full_disk_fails_the_write_and_keeps_every_earlier_record_sqlite(tmp_path: Path) -> None:
    location = str(tmp_path / "results.sqlite")
    open_store(location).close()  # the tables exist; the writer's files cannot grow past 2 MiB
    child = writer(location, "full", 10_000, file_size_limit=2 * 1024 * 1024)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 3, err
    assert "failed: cannot write a record to" in out and "nothing of that record was kept" in out
    done = acknowledged(out.splitlines())
    assert done > 5
    assert check_run(location, "full", done, done) == done
    # With room again, the store takes records again.
    again = writer(location, "after", 3)
    assert again.communicate(timeout=60)[0].split() == ["0", "1", "2"]


@pytest.mark.e2e  # a server of its own, filled up; twin: the SQLite test above
def test_a_full_disk_fails_the_write_and_keeps_every_earlier_record_postgres() -> None:
    # 1 MiB WAL segments (initdb --wal-segsize 1), and no server file may grow past 4 MiB: the records'
    # table fills up, and PostgreSQL refuses the write ("could not extend file"), as on a full disk.
    server = start_server(file_size_limit_kib=4096, wal_segment_mib=1)
    try:
        location = server.create_database()
        child = writer(location, "full", 10_000, samples=4000)
        out, err = child.communicate(timeout=300)
        assert child.returncode == 3, err
        assert "failed: cannot write a record to" in out and server.password not in out + err
        done = acknowledged(out.splitlines())
        assert done > 5
        assert check_run(location, "full", done, done) == done
    finally:
        stop_server(server)
