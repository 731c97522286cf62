"""Fixtures of the report tests: the fixture results file, and the HTML page the CLI makes of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import invoke
from tests.report.fixtures import all_records, write_results


@pytest.fixture
def results(results_path: Path) -> Path:
    """Several runs of several groups (tests/report/fixtures.py), written as JSON lines."""
    return write_results(results_path, all_records())


def html_report(*args: str) -> str:
    """`report --format html ARGS`: the page, after checking that it ran cleanly (exit 0, nothing on stderr)."""
    result = invoke("report", "--format", "html", *args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    return result.stdout
