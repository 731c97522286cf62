"""A password in a store's location never reaches an output or a file (issue 47, item 1).

Every text that looks like a URL (any scheme, any capitals, a driver suffix, blanks around it, one slash, no
slash before a user part) or like a libpq connection string is either a PostgreSQL store this tool reads or
refused before any work with one `Error:` line, exit 2, its password shown as ***. Each is given through
every way a command takes a store: --results, --from, --against, --baseline and $JAX_BENCHMARKS_RESULTS, and
--help's shown default; then every output and every file under the test's folder is scanned for the password.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

import pytest

from jax_benchmarks.store.location import RESULTS_ENV, as_location, masked
from tests.conftest import invoke
from tests.store.conftest import USER, PgServer
from tests.store.test_same_report import fill
from tests.verdict.fixtures import matmul

PASSWORD = "S3cr3tPW"
FAST = ("--quick", "-k", "matmul", "--matrix-size", "50", "--min-time", "0.01", "--no-memory")  # a record in ~0.1 s
RECORDS = matmul(numpy_s=0.010, jax_s=0.005)
# URL-like texts of stores this tool does not read: each is refused, never taken as a file name.
REFUSED = {
    "mysql": f"mysql://bench:{PASSWORD}@db.example/x",
    "capitals": f"MySQL://bench:{PASSWORD}@db.example/x",
    "leading blanks": f"  mysql://bench:{PASSWORD}@db.example/x",
    "trailing blanks": f"mysql://bench:{PASSWORD}@db.example/x  ",
    "driver suffix": f"postgresql+psycopg://bench:{PASSWORD}@db.example/x",
    "driver suffix, capitals": f" PostgreSQL+Psycopg2://bench:{PASSWORD}@db.example/x",
    "sqlite": f"sqlite://bench:{PASSWORD}@/x.sqlite",
    "sqlite, no password": "sqlite:///x.sqlite",
    "http": f"http://bench:{PASSWORD}@db.example/x",
    "token as the user": f"https://{PASSWORD}@git.example/x",
    "password parameter": f"mysql://db.example/x?user=bench&password={PASSWORD}",
    "a slash in the password": f"mysql://bench:pa/{PASSWORD}@db.example/x",
    "one slash": f"postgresql:/bench:{PASSWORD}@db.example/x",
    "no slash": f"mysql:bench:{PASSWORD}@db.example/x",
    "connection string": f"host=db.example user=bench password={PASSWORD} dbname=x",
}


def commands_given(location: str, good: str) -> list[tuple[list[str], dict[str, str]]]:
    """(args, environment) of every command that takes a store, with `location` where a store goes; `good` is an
    existing store for the other option of a pair."""
    env = {RESULTS_ENV: location}
    return [
        (["xla", "numpy", "--quick", "-k", "matmul", "--results", location], {}),
        (["report", "--results", location], {}),
        (["report", "--results", good, "--baseline", location], {}),
        (["verdict", "--from", location], {}),
        (["verdict", "--from", good, "--against", location], {}),
        (["verdict", "--results", location], {}),
        (["calibrate", "xla:numpy", "--results", location], {}),
        (["smoke", "xla", "--results", location], {}),
        (["xla", "numpy", "--quick", "-k", "matmul"], env),
        (["report"], env),
        (["verdict"], env),
        (["calibrate", "xla:numpy"], env),
        (["smoke", "xla"], env),
    ]


def files_under(*folders: Path) -> dict[Path, bytes]:
    return {path: path.read_bytes() for folder in folders if folder.exists()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def secrets_found(text: str, found: dict[Path, bytes], *secret: str) -> list[str]:
    """Where any of `secret` appears: in `text` (the outputs, also with its line breaks and blanks taken out: a
    console wraps long lines) or in a file."""
    return ([f"output: {s!r}" for s in secret if s in text or s in "".join(text.split())]
            + [f"{path}: {s!r}" for path, data in found.items() for s in secret if s.encode() in data])


@pytest.mark.parametrize("form", list(REFUSED))
def test_a_url_of_another_store_is_refused_with_its_password_masked_everywhere(
        form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    location = REFUSED[form]
    good = str(fill(str(tmp_path / "good.jsonl"), RECORDS))
    before = files_under(tmp_path)
    for args, env in commands_given(location, good):
        with monkeypatch.context() as patch:
            for name, value in env.items():
                patch.setenv(name, value)
            result = invoke(*args)
        text = result.stdout + result.stderr
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2, (args, env, text)
        assert len(lines) == 1 and lines[0].startswith("Error: Invalid value for"), (args, env, text)
        assert "Traceback" not in text
        if PASSWORD in location:
            assert "***" in lines[0], (args, env, lines[0])
            assert not secrets_found(text, {}, PASSWORD, location.strip()), (args, env, lines[0])
        if env:
            assert f"${RESULTS_ENV}" in lines[0], lines[0]
    assert files_under(tmp_path) == before  # refused before any work: nothing made, nothing changed


@pytest.mark.parametrize("location", [*REFUSED.values(), f"postgresql://bench:{PASSWORD}@db.example/x",
                                      f"  POSTGRES://bench:{PASSWORD}@db.example/x?password={PASSWORD}x "])
def test_help_shows_the_default_store_masked(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(RESULTS_ENV, location)
    for args in (["xla", "numpy"], ["report"], ["verdict"], ["calibrate"], ["smoke"], ["mnist", "pytorch"]):
        result = invoke(*args, "--help")
        assert result.exit_code == 0, (args, result.output)
        assert "[default:" in result.stdout and PASSWORD not in result.output, (args, location)
        if PASSWORD in location:
            assert "***" in result.stdout, args


@pytest.mark.parametrize(("text", "shown"), [
    (f"postgresql://bench:{PASSWORD}@db/x", "postgresql://bench:***@db/x"),
    (f"postgresql://bench@db/x?sslmode=require&password={PASSWORD}", "postgresql://bench@db/x?sslmode=require&password=***"),
    (f"postgresql://bench:p%40ss/{PASSWORD}@db/x", "postgresql://bench:***@db/x"),
    (f"mysql://bench:{PASSWORD}@db/x", "mysql://***@db/x"),
    (f"https://{PASSWORD}@git.example/x", "https://***@git.example/x"),
    (f"host=db password='{PASSWORD} x' dbname=x", "host=db password=*** dbname=x"),
    # libpq percent-decodes a URL's query keys: `pass%77ord` is `password` to it.
    (f"postgresql://bench@db/x?pass%77ord={PASSWORD}", "postgresql://bench@db/x?pass%77ord=***"),
    (f"postgresql://bench@db/x?%50ASSWORD={PASSWORD}&sslmode=require", "postgresql://bench@db/x?%50ASSWORD=***&sslmode=require"),
    ("data/results/results.sqlite", "data/results/results.sqlite"),
    ("a@b:c/results.sqlite", "a@b:c/results.sqlite"),
])
def test_masked_hides_every_form_of_the_password(text: str, shown: str) -> None:
    assert masked(text) == shown


@pytest.mark.parametrize(("text", "value"), [
    (f"POSTGRESQL://bench:{PASSWORD}@db/x", f"postgresql://bench:{PASSWORD}@db/x"),
    (f"  Postgres://bench:{PASSWORD}@db/x \n", f"postgres://bench:{PASSWORD}@db/x"),
    ("postgresql:///x", "postgresql:///x"),
])
def test_a_postgresql_url_in_any_capitals_and_blanks_is_one(text: str, value: str) -> None:
    location = as_location(text)
    assert location.kind == "postgres" and location.value == value and PASSWORD not in str(location)


# ------------------------------------------------------------------- the URLs this tool reads, end to end ---

def run_in_process(argv: Sequence[str], *, capture: bool = False, stdin: Any = None, stdout: IO[str] | None = None,
                   stderr: Any = None) -> subprocess.CompletedProcess[str]:
    """relaunch.run_fresh, in this process: a round's output goes where a fresh process's would (the log)."""
    from jax_benchmarks.cli.relaunch import self_command

    result = invoke(*argv[len(self_command()):])
    if stdout is not None:
        stdout.write(result.stdout + result.stderr)
    return subprocess.CompletedProcess(list(argv), result.exit_code, result.stdout if capture else None)


@pytest.fixture
def odd_role(pg_server: PgServer) -> Iterator[tuple[str, str]]:
    """A login role whose password holds characters a URL must percent-encode: (role, password)."""
    import psycopg  # type: ignore[import-not-found,unused-ignore]

    role, password = "odd_" + secrets.token_hex(4), f"p@ss/{PASSWORD}:%"
    with psycopg.connect(pg_server.url(), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN SUPERUSER PASSWORD '{password}'")
    yield role, password


def database_text(url: str) -> str:
    """Every text the store's database holds (its records, runs, environments and meta rows)."""
    import psycopg  # type: ignore[import-not-found,unused-ignore]

    with psycopg.connect(url) as conn:
        return "\n".join(str(row) for table in ("records", "runs", "envs", "meta")
                         for row in conn.execute(f"SELECT * FROM {table}").fetchall())


def test_a_postgresql_url_in_every_form_keeps_its_password_out_of_every_output_and_file(
        pg_server: PgServer, odd_role: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.cli.relaunch as relaunch

    monkeypatch.setattr(relaunch, "run_fresh", run_in_process)  # calibrate's rounds, in this process
    role, odd = odd_role
    database = pg_server.create_database().rpartition("/")[2]
    host = f"127.0.0.1:{pg_server.port}/{database}"
    plain = f"{USER}:{pg_server.password}@{host}"
    forms = {"plain": f"postgresql://{plain}", "capitals": f"POSTGRESQL://{plain}",
             "short scheme": f"Postgres://{plain}", "blanks": f"  postgresql://{plain} \t",
             "password parameter": f"postgresql://{USER}@{host}?password={pg_server.password}",
             "percent-encoded": f"postgresql://{role}:{quote(odd, safe='')}@{host}"}
    wrong = f"postgresql://{USER}:{PASSWORD}-wrong@{host}"
    secret = (pg_server.password, odd, PASSWORD)
    fill(forms["plain"], RECORDS)
    good = str(fill(str(tmp_path / "good.jsonl"), RECORDS))
    outputs: list[str] = []
    for name, url in forms.items():
        runs = [(["xla", "numpy", *FAST, "--results", url], {}),  # "N records appended to …"
                (["report", "--format", "csv"], {RESULTS_ENV: url})]
        if name in ("plain", "percent-encoded"):  # every other reader and writer (the same code for each form)
            runs += [(["report", "--results", url], {}),
                     (["report", "--results", good, "--baseline", url, "--format", "markdown"], {}),
                     (["verdict", "--from", url, "--against", url, "--format", "markdown", "-o",
                       f"page-{len(outputs)}.md"], {}),
                     (["xla", "numpy", *FAST, "--json"], {RESULTS_ENV: url})]
        if name == "percent-encoded":  # its rounds' argv and output go to calibrate's log
            runs.append((["calibrate", "xla:numpy", "--rounds", "6", "--options", " ".join(FAST),
                          "--results", url], {}))
        for args, env in runs:
            with monkeypatch.context() as patch:
                for key, value in env.items():
                    patch.setenv(key, value)
                result = invoke(*args)
            assert result.exit_code == 0, (name, args, result.output[-2000:])
            outputs.append(result.stdout + result.stderr)
        assert f"records appended to {as_location(url)}" in " ".join(outputs[-len(runs)].split())
    refused = invoke("report", "--results", wrong)
    assert refused.exit_code == 2 and ":***@" in refused.stderr
    outputs.append(refused.stdout + refused.stderr)
    logs = list(tmp_path.glob("calibrate-*.log"))
    assert len(logs) == 1 and logs[0].read_text().count("records appended to") == 6
    found = secrets_found("\n".join(outputs), files_under(tmp_path, Path(os.environ["XDG_DATA_HOME"])), *secret)
    assert not found, found
    assert not [s for s in secret if s in database_text(forms["plain"])]
