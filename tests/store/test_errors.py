"""A bad database URL, a server that is not there or refuses, wrong credentials: one line naming the
problem, exit 2, no traceback, and the password never printed (report and a benchmark command alike)."""

from __future__ import annotations

import pytest

from tests.conftest import invoke
from tests.store.conftest import USER, PgServer, free_port

SECRET = "n0t-th3-p4ssw0rd"
COMMANDS = (("report",), ("xla", "numpy", "--quick"))


def check_refused(url: str, *expected: str) -> None:
    for command in COMMANDS:
        result = invoke(*command, "--results", url)
        text = result.stdout + result.stderr
        assert result.exit_code == 2, (command, text)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "--results" in lines[0], (command, text)
        assert "Traceback" not in text and SECRET not in text
        for part in expected:
            assert part in lines[0], (command, lines[0])


def test_a_malformed_url_is_named(pg_server: PgServer) -> None:
    check_refused(f"postgresql://{USER}:{SECRET}@127.0.0.1:notaport/db", "port")


def test_a_url_that_does_not_parse_is_named() -> None:
    check_refused(f"postgresql://{USER}:{SECRET}@[::1/db", "not a PostgreSQL URL", "postgresql://USER")


def test_no_server_at_the_address(pg_server: PgServer) -> None:
    check_refused(f"postgresql://{USER}:{SECRET}@127.0.0.1:{free_port()}/db", "Connection refused")


def test_wrong_credentials(pg_server: PgServer) -> None:
    check_refused(pg_server.url("postgres", password=SECRET), "password authentication failed")


def test_a_database_the_server_does_not_have(pg_server: PgServer) -> None:
    url = pg_server.url("no_such_db").replace(pg_server.password, SECRET)
    check_refused(url, "password authentication failed")
    check_refused(pg_server.url("no_such_db"), 'database "no_such_db" does not exist')


def test_the_right_credentials_work(pg_url: str) -> None:
    assert invoke("report", "--results", pg_url).exit_code == 2  # empty: "no benchmark records ..."
    result = invoke("xla", "numpy", "--quick", "--results", pg_url, "--case", "matmul")
    assert result.exit_code == 0, result.stderr
    shown = invoke("report", "--results", pg_url, "--format", "csv")
    assert shown.exit_code == 0 and "matmul" in shown.stdout


@pytest.mark.parametrize("scheme", ["postgres", "postgresql"])
def test_both_schemes_name_postgresql(pg_server: PgServer, scheme: str) -> None:
    url = pg_server.url("postgres", password=SECRET).replace("postgresql://", f"{scheme}://")
    check_refused(url, "password authentication failed")
