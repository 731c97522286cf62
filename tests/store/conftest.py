"""A real PostgreSQL server for the store tests (started here, on a free localhost port), and a fresh
database per test. Tests that need it skip, with the reason, only where the server binaries or psycopg
are missing."""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

USER = "bench"


@dataclass(frozen=True)
class PgServer:
    bindir: Path
    datadir: Path
    port: int
    password: str

    def url(self, database: str = "postgres", password: str | None = None) -> str:
        return f"postgresql://{USER}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        import psycopg  # type: ignore[import-not-found,unused-ignore]

        name = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def as_server_user(args: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run its programs as the `postgres` OS user."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def start_server(file_size_limit_kib: int | None = None, wal_segment_mib: int | None = None) -> PgServer:
    """initdb into a new temporary folder and start the server (password login over TCP, as a team would)."""
    bindir = server_binaries()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries are not installed (Debian: apt-get install postgresql)")
    pytest.importorskip("psycopg", reason="psycopg 3 is not installed (pip install 'psycopg[binary]')")
    datadir = Path(tempfile.mkdtemp(prefix="store-pg-"))
    password = "pw-" + secrets.token_hex(8)
    pwfile = datadir / "pw"
    pwfile.write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(datadir, "postgres", "postgres")
        shutil.chown(pwfile, "postgres", "postgres")
    pgdata = datadir / "data"
    subprocess.run(as_server_user([str(bindir / "initdb"), "-D", str(pgdata), "-U", USER, "--pwfile", str(pwfile),
                                   "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                                   *(["--wal-segsize", str(wal_segment_mib)] if wal_segment_mib else [])]),
                   check=True, capture_output=True)
    port = free_port()
    options = f"-p {port} -k {datadir} -c listen_addresses=127.0.0.1 -c max_connections=40"
    start = [str(bindir / "pg_ctl"), "-D", str(pgdata), "-o", options, "-l", str(datadir / "log"), "-w", "start"]
    if file_size_limit_kib is not None:  # `ulimit -f` for the server: its files cannot grow past it
        start = ["bash", "-c", f'ulimit -f {file_size_limit_kib} && exec "$@"', "start", *start]
    subprocess.run(as_server_user(start), check=True, capture_output=True)
    return PgServer(bindir, datadir, port, password)


def stop_server(server: PgServer) -> None:
    subprocess.run(as_server_user([str(server.bindir / "pg_ctl"), "-D", str(server.datadir / "data"),
                                   "-m", "immediate", "stop"]), check=False, capture_output=True)
    shutil.rmtree(server.datadir, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    server = start_server()
    try:
        yield server
    finally:
        stop_server(server)


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty database of the test server."""
    return pg_server.create_database()


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty SQL store: an SQLite file, then a database of the test server."""
    if request.param == "sqlite":
        return str(tmp_path / "results.sqlite")
    server: PgServer = request.getfixturevalue("pg_server")
    return server.create_database()
