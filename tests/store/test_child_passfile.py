"""A child process (a round, a smoke step) gets the store on its command line, which every user of the machine may
read (`ps`): a PostgreSQL URL's password moves into a libpq password file (mode 0600, removed afterwards) that the
URL names with `passfile`, and the child connects with it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from jax_benchmarks.store.location import as_location, for_children, open_store, without_passwords
from tests.store.conftest import PgServer


@pytest.mark.parametrize(("url", "bare", "password"), [
    ("postgresql://bench:S3cr%3At@db:5432/x", "postgresql://bench@db:5432/x", "S3cr:t"),
    ("postgresql://bench@db/x?sslmode=require&password=S3cr", "postgresql://bench@db/x?sslmode=require", "S3cr"),
    ("postgresql://bench@db/x?pass%77ord=S3cr", "postgresql://bench@db/x", "S3cr"),
    ("postgresql://bench@db/x", "postgresql://bench@db/x", None),
])
def test_without_passwords_takes_out_every_spelling(url: str, bare: str, password: str | None) -> None:
    assert without_passwords(url) == (bare, password)


def test_a_file_store_is_given_as_it_is(tmp_path: Path) -> None:
    location = as_location(str(tmp_path / "r.sqlite"))
    with for_children(location) as given:
        assert given == location


def test_the_child_connects_with_the_password_file_alone(pg_url: str, pg_server: PgServer) -> None:
    location = as_location(pg_url)
    with pytest.raises(Exception, match="password"):  # the server asks for one: without the file, no connection
        open_store(as_location(without_passwords(pg_url)[0])).close()
    with for_children(location) as given:
        assert pg_server.password not in given.value and "passfile=" in given.value
        passfile = Path(given.value.rsplit("passfile=", 1)[1])
        assert stat.S_IMODE(passfile.stat().st_mode) == 0o600
        open_store(given).close()  # connects: libpq read the password from the file
    assert not passfile.exists() and not passfile.parent.exists()
