"""A child process (a round, a smoke step) gets the store on its command line, which every user of the machine may
read (`ps`): a PostgreSQL URL's password moves into a libpq password file (mode 0600, removed afterwards) that the
URL names with `passfile`, and the child connects with it."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.store.location import as_location, for_children, open_store, passfile_line, without_passwords
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


PASSWORD = "S3cr3t-in-argv"
URL = f"postgresql://bench:{PASSWORD}@db.example/results"


def started_rounds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], str]]:
    """Each round's argv as the launcher got it, with what the password file it names held then."""
    from jax_benchmarks.cli import relaunch

    started: list[tuple[list[str], str]] = []

    def run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        store = argv[argv.index("--results") + 1]
        started.append((list(argv), Path(store.rsplit("passfile=", 1)[1]).read_text()))
        return subprocess.CompletedProcess(argv, 0, stdout="")

    monkeypatch.setattr(relaunch, "run_fresh", run)  # every round starts through the one launcher (cli/rounds.py)
    return started


def test_a_verdicts_rounds_never_carry_the_password(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from jax_benchmarks.verdict import cli as verdict_cli
    from jax_benchmarks.verdict.scale import Scale, Step

    started = started_rounds(monkeypatch)
    scale = Scale("quick", 2, (Step("xla", "numpy", ("--matrix-size", "64"), 1.0),), "test")
    verdict_cli.measure(scale, as_location(URL), "run", tmp_path / "log", lambda *_: None)
    assert len(started) == 2
    for argv, held in started:
        assert PASSWORD not in " ".join(argv) and held == f"*:*:*:*:{PASSWORD}\n"
    assert PASSWORD not in (tmp_path / "log").read_text()


def test_a_commands_rounds_never_carry_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.cli.rounds import run_rounds
    from jax_benchmarks.xla.settings import XlaSettings

    started = started_rounds(monkeypatch)
    # Built without validation: validating a store connects to it, and there is no server here.
    run_rounds("xla", "numpy", XlaSettings.model_construct(rounds=2, results=as_location(URL)), "run")
    assert len(started) == 2
    for argv, held in started:
        assert PASSWORD not in " ".join(argv) and held == f"*:*:*:*:{PASSWORD}\n"


def test_a_password_with_a_colon_or_backslash_is_escaped_as_libpq_reads_it() -> None:
    assert passfile_line("a:b\\c") == "*:*:*:*:a\\:b\\\\c\n"
