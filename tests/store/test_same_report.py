"""Every report format and view gives the same output whichever store holds the same records (JSON lines,
SQLite, PostgreSQL): the stores' views pick the same runs, baselines and histories."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from jax_benchmarks.cli.plots import PNG_SIGNATURE
from jax_benchmarks.store.location import ResultsLocation, open_store
from jax_benchmarks.store.record import Record
from tests.conftest import invoke
from tests.report.fixtures import ENV, XLA_NEW, XLA_OLD, all_records, write_results, xla_run
from tests.store.conftest import PgServer

FORMATS = ("table", "markdown", "csv", "json", "github-benchmark", "jsonl")
VIEWS = (
    (), ("--baseline", "previous"), ("--run", XLA_NEW[:12]), ("--run", "2025"), ("--run", "nope"),
    ("--group", "xla"), ("--group", "scipy"), ("--backend", "jax"), ("--backend", "nope"),
    ("--group", "xla", "--backend", "numpy", "--baseline", "previous"), ("--baseline", XLA_OLD),
    ("--history",), ("--history", "--group", "xla"), ("--scaling",),
)
OTHER_MACHINE_RUN = "20250101T150000Z-eeeeee"
PNG = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")


def history() -> list[Record]:
    """The report fixture's runs, and one xla run on another machine between its two xla runs (so that
    `--baseline previous` has to pass it by), written interleaved with the others."""
    other = [r.model_copy(update={"env": {**ENV, "cpu": "Other CPU 1", "host": "elsewhere"}})
             for r in xla_run(OTHER_MACHINE_RUN, "2025-01-01T15:00:00+00:00", 3e-4)]
    records = all_records()
    return records[:3] + other + records[3:]


def fill(location: str, records: list[Record]) -> str:
    if location.endswith(".jsonl"):
        write_results(Path(location), records)
        return location
    store = open_store(location)
    try:
        for record in records:
            store.append(record)
    finally:
        store.close()
    return location


def outputs(location: str) -> dict[tuple[str, ...], tuple[int, str, str]]:
    """(exit code, stdout, stderr) of every format and view, the location's text replaced by a placeholder."""
    seen = {}
    shown = str(ResultsLocation(location))  # how the page names the store: its password left out

    def placed(text: str) -> str:
        return text.replace(location, "<results>").replace(shown, "<results>")

    for fmt in (*FORMATS, "html"):
        for view in VIEWS if fmt != "html" else ((), ("--history",), ("--baseline", "previous")):
            result = invoke("report", "--results", location, "--format", fmt, *view)
            # The page's charts are PNGs drawn from the tables compared here; their bytes are not
            # compared (matplotlib's output is not byte-stable within one process), their number is.
            stdout = PNG.sub("data:image/png;base64,…", placed(result.stdout))
            seen[(fmt, *view)] = (result.exit_code, stdout, placed(result.stderr))
    return seen


def difference(seen: str, expected: str) -> str:
    return "\n".join(list(difflib.unified_diff(expected.splitlines(), seen.splitlines(), lineterm="", n=0))[:12])


# PostgreSQL's: e2e (a real server; 87 more report commands); twin: the SQLite store's, the same views and formats
# through the same queries (store/sql.py's SqlStore; tests/store/ runs both SQL stores elsewhere by default).
@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.e2e)])
def test_every_format_and_view_is_the_same_in_every_store(tmp_path: Path, store: str,
                                                          request: pytest.FixtureRequest,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The charts' bytes are not compared (see outputs), only their number: drawing them to PNG (most of this
    # test's time) is skipped; tests/report/ checks the real PNGs.
    monkeypatch.setattr("jax_benchmarks.cli.plots.png_bytes", lambda figure: PNG_SIGNATURE)
    records = history()
    jsonl = outputs(fill(str(tmp_path / "results.jsonl"), records))
    if store == "sqlite":
        location = str(tmp_path / "other.sqlite")
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        location = server.create_database()
    seen_in_store = outputs(fill(location, records))
    # The views show something (and the errors are errors): the comparison is not of empty outputs.
    assert jsonl[("table",)][0] == 0 and "xla" in jsonl[("table",)][1]
    assert jsonl[("csv", "--baseline", "previous")][0] == 0
    assert XLA_OLD in jsonl[("csv", "--baseline", "previous")][1]  # the other machine's run is passed by
    assert OTHER_MACHINE_RUN not in jsonl[("csv", "--baseline", "previous")][1]
    assert jsonl[("csv", "--run", "nope")][0] == 2 and "latest runs" in jsonl[("csv", "--run", "nope")][2]
    assert jsonl[("csv", "--run", "2025")][0] == 2 and "give more of the id" in jsonl[("csv", "--run", "2025")][2]
    assert jsonl[("jsonl",)][1].count("\n") == len(records)
    assert jsonl[("html", "--history")][1].count("data:image/png") >= 6
    for view, expected in jsonl.items():
        seen = seen_in_store[view]
        assert seen == expected, (store, view, difference(seen[1], expected[1]))
