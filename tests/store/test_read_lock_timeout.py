"""--lock-timeout bounds every wait for a lock, reads included (issue 47, item 5): with another session holding
a table lock on a PostgreSQL store, `report`, `report --baseline`, `verdict --from` and `verdict --against` end
after about --lock-timeout with one `Error:` line, exit 2, instead of waiting as long as the lock is held."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.store.conftest import PgServer
from tests.store.test_same_report import fill
from tests.verdict.fixtures import matmul

RECORDS = matmul(numpy_s=0.010, jax_s=0.005)
HELD_S = 12.0  # how long the other session holds its lock at most: a reader that waits for it takes this long


@pytest.fixture
def locked(pg_url: str) -> Iterator[str]:
    """A store whose `records` table another session holds in ACCESS EXCLUSIVE mode (as LOCK TABLE, ALTER TABLE or
    VACUUM FULL take it), released after HELD_S at the latest."""
    import psycopg  # type: ignore[import-not-found,unused-ignore]

    fill(pg_url, RECORDS)
    holder = psycopg.connect(pg_url)
    holder.execute("LOCK TABLE records IN ACCESS EXCLUSIVE MODE")  # in a transaction, held until it ends
    release = threading.Timer(HELD_S, holder.rollback)
    release.start()
    try:
        yield pg_url
    finally:
        release.cancel()
        holder.close()


def test_every_reader_ends_at_the_lock_timeout(locked: str, pg_server: PgServer, tmp_path: Path) -> None:
    good = fill(str(tmp_path / "good.jsonl"), RECORDS)
    for args in (["report", "--results", locked], ["report", "--results", good, "--baseline", locked],
                 ["verdict", "--from", locked, "--format", "markdown"],
                 ["verdict", "--from", good, "--against", locked, "--format", "markdown"]):
        began = time.monotonic()
        result = invoke(*args, "--lock-timeout", "0.2")  # short: each reader waits this long
        took = time.monotonic() - began
        lines = result.stderr.strip().splitlines()
        assert result.exit_code == 2, (args, took, result.output)
        assert took < HELD_S / 2, (args, took)
        assert len(lines) == 1 and lines[0].startswith("Error:") and "lock timeout" in lines[0], (args, lines)
        assert "--lock-timeout" in lines[0] and ":***@" in lines[0], lines[0]  # the store named, masked
        assert pg_server.password not in result.output


def test_verdict_and_calibrate_pass_their_lock_timeout_on() -> None:
    from jax_benchmarks.store.location import ResultsLocation
    from jax_benchmarks.cli.rounds import step_options
    from jax_benchmarks.verdict.scale import SCALES

    step = SCALES["quick"].steps[0]
    assert step_options(step, 0, ResultsLocation("r.jsonl", 2.5), None)[-4:] == [
        "--results", "r.jsonl", "--lock-timeout", "2.5"]  # each round waits as long as the verdict was told
    assert "--lock-timeout" not in step_options(step, 0, ResultsLocation("r.jsonl"), None)  # the default: the same
    for command in (["verdict", "--from", "r.jsonl"], ["calibrate", "xla"]):
        for value in ("nan", "-1", "1e9"):
            result = invoke(*command, "--lock-timeout", value)
            assert result.exit_code == 2 and "'--lock-timeout'" in result.stderr, (command, value, result.output)
