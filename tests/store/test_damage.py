"""Round four of hostile and unlucky conditions: stores that are damaged, locked, read-only, another
program's, empty; `verdict` reading them as `report` does; hostile `-k` text; interrupted `--rounds`.

Every refusal is checked the same way (`refused`): its exit code, exactly one line on stderr, no traceback,
no password; every read-only input is checked byte for byte, and every earlier record is still there."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from jax_benchmarks.store.location import open_store
from jax_benchmarks.store.record import Record
from tests.conftest import AS_IN_A_TERMINAL, invoke
from tests.store.conftest import PgServer
from tests.store.test_same_report import fill
from tests.verdict.fixtures import matmul

REPO = Path(__file__).resolve().parents[2]
SECRET = "n0t-th3-p4ssw0rd"
RECORDS = matmul(numpy_s=0.010, jax_s=0.005)
# A reader (report, the verdict page) and a writer (a benchmark), each with its option naming the store.
READERS = ((("report", "--format", "csv", "--results"), "--results"),
           (("verdict", "--format", "markdown", "--from"), "--from"))
WRITER = (("xla", "numpy", "--quick", "-k", "matmul", "--results"), "--results")


def refused(args: Sequence[str], code: int, *words: str) -> str:
    """Run the CLI in process; check the refusal's form and return its one line."""
    result = invoke(*args)
    text = result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == code, (args, text)
    assert len(lines) == 1, (args, text)
    assert "Traceback" not in text and SECRET not in text, (args, text)
    for word in words:
        assert word in lines[0], (args, lines[0])
    return lines[0]


def digest(*paths: Path) -> list[str | None]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None for p in paths]


def sqlite_store(path: Path, records: Sequence[Record] = RECORDS) -> Path:
    return Path(fill(str(path), list(records)))


def execute(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def side_files(path: Path) -> list[str]:
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(path.name))


def stored_count(path: Path) -> int:
    store = open_store(path, create=False)
    try:
        return len(list(store.all_records()))
    finally:
        store.close()


# ------------------------------------------------------------- damage, newer schemas, another program ---

DAMAGE = {
    "meta version 'abc'": (("UPDATE meta SET value = 'abc' WHERE key = 'schema'",),
                           ("is damaged", "meta row 'schema'", "'abc'")),
    "newer schema": (("UPDATE meta SET value = '99' WHERE key = 'schema'",), ("newer jax-benchmarks", "99")),
    "another program's tables": (("DROP TABLE runs", "CREATE TABLE notes (text TEXT)"),
                                 ("not a jax-benchmarks results store", "'notes'")),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_or_newer_store_is_one_line_from_every_command(tmp_path: Path, damage: str) -> None:
    statements, words = DAMAGE[damage]
    path = sqlite_store(tmp_path / "r.sqlite")
    execute(path, *statements)
    before = digest(path)
    files = side_files(path)
    lines = [refused([*args, str(path)], 2, option, str(path), *words) for args, option in (*READERS, WRITER)]
    # The same reason from report, verdict and a benchmark (after the option that names the store).
    assert len({line.split(": ", 2)[-1] for line in lines}) == 1, lines
    assert digest(path) == before and side_files(path) == files


def test_a_foreign_sqlite_database_is_refused_with_no_byte_changed(tmp_path: Path) -> None:
    path = tmp_path / "other-app.sqlite"
    execute(path, "CREATE TABLE customers (name TEXT)", "INSERT INTO customers VALUES ('ada')")
    before = digest(path)
    for args, option in (*READERS, WRITER):
        refused([*args, str(path)], 2, option, "not a jax-benchmarks results store", "'customers'")
    assert digest(path) == before and side_files(path) == ["other-app.sqlite"]  # not even a -wal


def test_an_empty_file_is_refused_for_reading_and_stays_empty(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    path.touch()
    for args, option in READERS:
        refused([*args, str(path)], 2, option, "is an empty file, not a results store")
    assert path.stat().st_size == 0 and side_files(path) == ["r.sqlite"]


def test_a_broken_env_row_is_one_line_naming_the_store_and_the_row(tmp_path: Path) -> None:
    path = sqlite_store(tmp_path / "r.sqlite", [*RECORDS, *matmul(0.011, 0.006, run_id="20261125T120000Z-bbbbbb")])
    execute(path, "UPDATE envs SET env = '{\"cpu\": ' WHERE id = 1")
    before = digest(path)
    refused(["report", "--results", str(path), "--baseline", "previous"], 2, str(path), "envs row 1", "not JSON")
    execute(path, "UPDATE envs SET env = '[1, 2]' WHERE id = 1")
    refused(["report", "--results", str(path), "--baseline", "previous"], 2, "envs row 1", "not a JSON object")
    assert digest(path) != before  # (changed by the test itself, above)
    execute(path, "UPDATE envs SET env = '{}' WHERE id = 1")
    assert stored_count(path) == len(RECORDS) * 2  # every record still there


# ----------------------------------------------------------------- reading never writes, never waits ---

HOLD_LOCK = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO meta (key, value) VALUES ('held', 'by another process')")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


def hold_lock(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process that holds the store's write lock (a writer mid-transaction) for `seconds`."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), str(seconds)], stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def test_readers_do_not_wait_behind_a_writer_nor_write(tmp_path: Path) -> None:
    path = sqlite_store(tmp_path / "r.sqlite")
    holder = hold_lock(path, 30)
    try:
        before = digest(path)
        for args, _ in READERS:
            began = time.monotonic()
            result = invoke(*args, str(path))
            assert result.exit_code == 0, result.stderr
            assert time.monotonic() - began < 10  # a writer's lock is not a reader's: no wait
            assert "matmul" in result.stdout
        assert digest(path) == before
    finally:
        holder.kill()
        holder.wait()


def test_a_wait_for_a_lock_is_said_within_2_s_and_ends_at_the_lock_timeout(tmp_path: Path) -> None:
    path = sqlite_store(tmp_path / "r.sqlite")
    holder = hold_lock(path, 30)
    try:
        began = time.monotonic()
        child = subprocess.Popen([sys.executable, str(REPO / "main.py"), *WRITER[0], str(path), "--lock-timeout", "2"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        assert child.stderr is not None
        notice = child.stderr.readline()
        said_after = time.monotonic() - began
        rest = child.stderr.read()
        child.wait(timeout=60)
        ended_after = time.monotonic() - began
    finally:
        holder.kill()
        holder.wait()
    # Started in a fresh interpreter: its imports come before the store is opened (well under a second here).
    assert notice.startswith(f"waiting for {path}: another process holds its write lock (up to 2 s, --lock-timeout)")
    # the notice comes 1 s (LOCK_NOTICE_S) into the wait, after the start-up: a 2 s --lock-timeout is the
    # shortest that shows it
    assert said_after < 2 + 3, said_after
    lines = rest.strip().splitlines()
    assert child.returncode == 2 and len(lines) == 1 and "Traceback" not in rest, rest
    assert "--lock-timeout SECONDS waits longer" in lines[0] and "'--results'" in lines[0]
    assert ended_after < 20
    assert stored_count(path) == len(RECORDS)  # every earlier record kept, nothing added


def in_mount_namespace(script: str) -> subprocess.CompletedProcess[str]:
    """Run a shell script as root of a new user and mount namespace (its mounts vanish with it)."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs none /mnt"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"this machine does not let an unprivileged mount namespace mount: {probe.stderr.strip()}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    return subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=300)


def test_a_store_on_a_read_only_mount_is_read_and_refused_for_writing(tmp_path: Path) -> None:
    source, mounted = tmp_path / "store", tmp_path / "ro"
    source.mkdir()
    mounted.mkdir()
    path = sqlite_store(source / "r.sqlite")
    assert side_files(path) == ["r.sqlite"]  # closed: no WAL left beside it, as on a copied store
    before = digest(path)
    main = f"{sys.executable} {REPO / 'main.py'}"
    store = mounted / "r.sqlite"
    done = in_mount_namespace(
        f"mount --bind {source} {mounted} && mount -o remount,bind,ro {mounted} && cd {tmp_path} && "
        f"{main} report --format csv --results {store} > report.out 2> report.err; echo report=$?; "
        f"{main} verdict --format markdown --from {store} -o - > verdict.out 2> verdict.err; echo verdict=$?; "
        f"{main} {' '.join(WRITER[0])} {store} > bench.out 2> bench.err; echo bench=$?")
    codes = dict(line.split("=") for line in done.stdout.split())
    assert codes == {"report": "0", "verdict": "0", "bench": "2"}, (done.stdout, done.stderr)
    assert "matmul" in (tmp_path / "report.out").read_text() and "matmul" in (tmp_path / "verdict.out").read_text()
    error = (tmp_path / "bench.err").read_text().strip().splitlines()
    assert len(error) == 1 and "'--results'" in error[0] and "Read-only file system" in error[0], error
    assert not (tmp_path / "bench.out").read_text()  # refused before any work
    assert digest(path) == before and side_files(path) == ["r.sqlite"]


def test_a_select_only_role_reads_the_database_and_cannot_write(pg_server: PgServer, pg_url: str) -> None:
    import psycopg  # type: ignore[import-not-found,unused-ignore]

    fill(pg_url, RECORDS)
    role = "reader_" + secrets.token_hex(4)
    database = pg_url.rsplit("/", 1)[1]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{SECRET}'")
        conn.execute(f"GRANT CONNECT ON DATABASE {database} TO {role}")
        conn.execute(f"GRANT USAGE ON SCHEMA public TO {role}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    url = f"postgresql://{role}:{SECRET}@127.0.0.1:{pg_server.port}/{database}"
    for args, _ in READERS:
        result = invoke(*args, url)
        assert result.exit_code == 0, result.stderr
        assert "matmul" in result.stdout and SECRET not in result.stdout + result.stderr
    refused([*WRITER[0], url], 2, "'--results'", "may read the store but not write to it")
    assert invoke("report", "--format", "jsonl", "--results", pg_url).stdout.count("\n") == len(RECORDS)


# ------------------------------------------------------------------------------ verdict reads any store ---

def test_verdict_reads_a_database_url_and_never_shows_its_password(pg_server: PgServer, pg_url: str) -> None:
    fill(pg_url, RECORDS)
    page = invoke("verdict", "--from", pg_url, "--against", pg_url, "--format", "markdown", "-o", "-")
    assert page.exit_code == 0, page.stderr
    assert "jax is fastest" in page.stdout and pg_server.password not in page.stdout + page.stderr
    wrong = pg_url.replace(pg_server.password, SECRET)
    refused(["verdict", "--from", wrong], 2, "'--from'", "password authentication failed", ":***@")
    refused(["verdict", "--from", pg_url, "--against", wrong], 2, "'--against'", "password authentication failed")


def test_verdict_refuses_an_empty_result_as_report_does(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    corrupt = tmp_path / "corrupt.jsonl"
    corrupt.write_text('{"run_id": "torn\n')
    refused(["verdict", "--from", str(empty)], 2, "no benchmark records in", str(empty))
    result = invoke("verdict", "--from", str(corrupt))  # the skipped line is said, then the refusal
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 2 and "Traceback" not in result.stderr, result.stderr
    assert "skipped 1 corrupt" in lines[0] and lines[1].startswith(f"Error: no benchmark records in {corrupt}")
    database = sqlite_store(tmp_path / "r.sqlite")
    refused(["verdict", "--from", str(database), "--run", "20991231"], 2, "'--run'", "no run '20991231'")
    empty_db = tmp_path / "new.sqlite"
    open_store(empty_db).close()
    for args, option in READERS:
        refused([*args, str(empty_db)], 2, "no benchmark records in", str(empty_db))
    page = invoke("verdict", "--from", str(database), "--run", RECORDS[0].run_id[:12], "--format", "markdown", "-o", "-")
    assert page.exit_code == 0 and "jax is fastest" in page.stdout  # a unique prefix, as report takes it


# ------------------------------------------------------------------------ refusals leave nothing behind ---

@pytest.mark.parametrize("name", ["r.sqlite", "r.jsonl"])
def test_a_refused_command_makes_no_results_file_nor_folder(tmp_path: Path, name: str) -> None:
    target = tmp_path / "new" / "folders" / name
    refused(["xla", "numpy", "--results", str(target), "--repeats", "0"], 2, "--repeats")
    refused(["xla", "numpy", "--results", str(target), "-k", ",,,"], 2, "--case", "has no pattern")
    assert not (tmp_path / "new").exists()
    refused(["verdict", "--from", str(tmp_path / "missing.jsonl"), "-o", str(tmp_path / "pages" / "v.html")], 2,
            "--from", "does not exist")
    assert not (tmp_path / "pages").exists()


def test_a_rolled_back_import_on_a_full_disk_leaves_no_wal(tmp_path: Path) -> None:
    """A real 4 MiB tmpfs: the JSON-lines file fits, its import into the SQLite store beside it does not."""
    lines = [r.model_copy(update={"run_id": f"20261124T{i:06d}Z-aaaaaa", "case": f"case_{i}"}).model_dump_json()
             for i in range(2000) for r in RECORDS[:1]]
    legacy = tmp_path / "results.jsonl"
    legacy.write_text("\n".join(lines) + "\n")
    assert 300_000 < legacy.stat().st_size < 1_500_000
    disk = tmp_path / "disk"
    disk.mkdir()
    main = f"{sys.executable} {REPO / 'main.py'}"
    done = in_mount_namespace(
        f"mount -t tmpfs -o size=4m tmpfs {disk} && cp {legacy} {disk}/ && "
        f"head -c $(( $(df --output=avail -B1 {disk} | tail -1) - 700000 )) /dev/zero > {disk}/filler; "
        f"cd {tmp_path}; {main} report --results {disk}/results.sqlite 2> import.err; echo import=$?; "
        f"ls -l {disk} > listing; df --output=avail -B1 {disk} | tail -1 > free")
    assert "import=2" in done.stdout, (done.stdout, done.stderr)
    error = (tmp_path / "import.err").read_text().strip().splitlines()
    assert len(error) == 1 and "cannot import" in error[0] and "Traceback" not in error[0], error
    sizes = {line.split()[-1]: int(line.split()[4]) for line in (tmp_path / "listing").read_text().splitlines()[1:]}
    assert sizes.get("results.sqlite-wal", 0) == 0, sizes  # the rolled-back pages' space is given back
    assert sizes["results.sqlite"] < 500_000, sizes  # the new store's empty tables: no record was kept
    # What is free is what the filler left, less the empty store (and SQLite's 32 KiB shared-memory file).
    assert int((tmp_path / "free").read_text()) > 700_000 - sizes["results.sqlite"] - 64 * 1024


# --------------------------------------------------------------------------------------- hostile -k ---

def test_k_is_printed_literally(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    markup = invoke("xla", "numpy", "--quick", "-k", "[/]", "--results", str(results))
    assert markup.exit_code == 0 and "Traceback" not in markup.stdout + markup.stderr, markup.stderr
    assert "not selected by -k [/]" in markup.stdout
    hostile = "matmul\x1b]0;owned\x07\x1b[2J"
    shown = invoke("xla", "numpy", "--quick", "-k", f"{hostile},inverse", "--results", str(results))
    text = shown.stdout + shown.stderr
    assert shown.exit_code == 0 and "\x1b" not in text and "\x07" not in text, text
    assert "\\x1b]0;owned\\x07" in text
    listed = invoke("xla", "numpy", "--list", "-k", "residual\nxla numpy @cpu: 99 cases\n  fake_case")
    assert listed.exit_code == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "  fake_case" not in lines and "xla numpy @cpu: 99 cases" not in lines, lines
    assert lines[-1] == "(-k residual\\nxla numpy @cpu: 99 cases\\n  fake_case: cases not selected are not shown)"


@pytest.mark.parametrize("pattern", [",,,", " , ", ""])
def test_a_k_with_no_pattern_is_refused(pattern: str) -> None:
    refused(["xla", "numpy", "--quick", "-k", pattern], 2, "--case")


# ------------------------------------------------------------------------------- interrupted rounds ---

@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupting_rounds_counts_the_records_in_the_store(tmp_path: Path, signum: int, code: int) -> None:
    results = tmp_path / "r.jsonl"
    child = subprocess.Popen(
        [sys.executable, *AS_IN_A_TERMINAL, str(REPO / "main.py"), "xla", "numpy", "--quick", "-k", "matmul,inverse",
         "--min-time", "0.01", "--rounds", "20", "--results", str(results)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None:
        if results.exists() and results.read_bytes().count(b"\n") >= 3:  # a round done, the next one under way
            break
        time.sleep(0.05)
    child.send_signal(signum)  # the parent only, as `kill` does: it hands the signal to the round
    _, stderr = child.communicate(timeout=60)
    saved = [json.loads(line) for line in results.read_text().splitlines()]
    run_id = saved[0]["run_id"]
    assert child.returncode == code, stderr
    assert stderr.strip().splitlines()[-1] == f"Interrupted: {len(saved)} records of run {run_id} are saved in {results}"
    assert len(saved) >= 3 and "Traceback" not in stderr and "no record was written" not in stderr


def test_interrupting_smoke_counts_the_records_its_commands_added(tmp_path: Path) -> None:
    results = tmp_path / "smoke.jsonl"
    earlier = RECORDS[0].model_dump_json() + "\n"
    results.write_text(earlier)  # a record of an earlier run: kept, and not counted as the smoke run's
    child = subprocess.Popen([sys.executable, str(REPO / "main.py"), "smoke", "xla", "--results", str(results)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None and results.read_bytes().count(b"\n") < 2:
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=60)
    lines = results.read_text().splitlines()
    assert child.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == f"Interrupted: the smoke run added {len(lines) - 1} records to {results}"
    assert lines[0] + "\n" == earlier and len(lines) >= 2 and "Traceback" not in stderr


def test_interrupting_a_measuring_verdict_counts_its_records_in_the_store(tmp_path: Path) -> None:
    results = tmp_path / "verdict.jsonl"
    child = subprocess.Popen([sys.executable, str(REPO / "main.py"), "verdict", "--scale", "quick", "--results",
                              str(results)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and child.poll() is None and not (
            results.exists() and results.read_bytes().count(b"\n") >= 1):
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=60)
    saved = [json.loads(line) for line in results.read_text().splitlines()]
    assert child.returncode == 143, stderr
    assert stderr.strip().splitlines()[-1] == (f"Interrupted: {len(saved)} records of verdict run {saved[0]['run_id']} "
                                               f"are saved in {results}")
    assert "Traceback" not in stderr


def test_a_database_writer_honours_the_lock_timeout(pg_url: str) -> None:
    import psycopg  # type: ignore[import-not-found,unused-ignore]

    from jax_benchmarks.store.postgres import SCHEMA_LOCK

    fill(pg_url, RECORDS)
    with psycopg.connect(pg_url, autocommit=True) as holder:  # another writer, making the tables
        holder.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK,))
        began = time.monotonic()
        refused([*WRITER[0], pg_url, "--lock-timeout", "2"], 2, "'--results'", "lock timeout")
        assert time.monotonic() - began < 15
    assert invoke("report", "--format", "jsonl", "--results", pg_url).stdout.count("\n") == len(RECORDS)


def test_a_store_of_schema_1_is_read_as_it_is(tmp_path: Path) -> None:
    path = sqlite_store(tmp_path / "r.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)
    try:  # as the version before the samples column wrote it: every record whole in `body`
        for number, record in enumerate(RECORDS, start=1):
            conn.execute("UPDATE records SET body = ? WHERE id = ?", (record.model_dump_json(), number))
        conn.execute("ALTER TABLE records DROP COLUMN samples")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    finally:
        conn.close()
    before = digest(path)
    exported = invoke("report", "--format", "jsonl", "--results", str(path))
    assert exported.exit_code == 0, exported.stderr
    assert [Record.model_validate_json(line) for line in exported.stdout.splitlines()] == RECORDS
    assert digest(path) == before  # not brought up to schema 2 by a reader
