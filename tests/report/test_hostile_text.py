"""Text from a results file reaches the terminal literally; a terminal that cannot encode `·` gets ASCII.

The records carry escape sequences (clear screen, window title), rich markup (`[/]`, `[bold]`), emoji codes
and HTML in their run id, case, backend and variant, as a hand-edited or hostile results file could.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.cli.console import literal, visible
from tests.conftest import invoke
from tests.report.fixtures import record, write_results

REPO = Path(__file__).resolve().parents[2]
CLEAR, TITLE = "\x1b[2J", "\x1b]0;pwned\x07"
CASE = f"case[/]{CLEAR}x"
RUN = "20250102T120000Z-run[bold]"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    times = [1e-3, 1.1e-3, 1.2e-3]
    return write_results(tmp_path / "hostile.jsonl", [
        record("20250101T120000Z-first", "2025-01-01T12:00:00+00:00", "xla", "numpy", CASE, times),
        record(RUN, "2025-01-02T12:00:00+00:00", "xla", f"jax<script>{TITLE}", CASE, times,
               variant=":x: [red]v"),
        record(RUN, "2025-01-02T12:00:00+00:00", "xla", "numpy", CASE, [t * 2 for t in times]),
    ])


def test_visible_shows_control_characters_and_keeps_the_rest() -> None:
    assert visible("plain · text ×2") == "plain · text ×2"
    assert visible(f"a{CLEAR}b\u202ec\n") == "a\\x1b[2Jb\\u202ec\\n"
    assert literal("case[/]") == "case\\[/]"


@pytest.mark.parametrize("history", [False, True])
def test_the_table_prints_data_literally(hostile: Path, history: bool) -> None:
    result = invoke("report", "--results", str(hostile), *(["--history"] if history else []))
    assert result.exit_code == 0, result.stderr + result.stdout
    out = result.stdout + result.stderr
    assert "\x1b" not in out and "\x07" not in out and "Traceback" not in out
    assert "case[/]\\x1b[2Jx" in out.replace("\n", "")  # the name as it reads, escapes visible
    if not history:
        assert RUN in out and "jax<script>" in out and "pwned\\x07" in out
        assert ":x:" in out and "[red]" in out and "❌" not in out  # neither an emoji nor a colour


def test_markdown_escapes_html_in_data(hostile: Path) -> None:
    result = invoke("report", "--results", str(hostile), "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    assert "<script>" not in result.stdout and "jax&lt;script&gt;" in result.stdout
    assert "\x1b" not in result.stdout and "case[/]\\x1b[2Jx" in result.stdout


def test_a_results_path_with_markup_is_printed_as_given(tmp_path: Path) -> None:
    results = tmp_path / "r[bold]x.jsonl"
    result = invoke("xla", "numpy", "--matrix-size", "8", "--repeats", "2", "--results", str(results))
    assert result.exit_code == 0, result.stderr + result.stdout
    assert f"records appended to {results}" in result.stdout.replace("\n", "")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_that_cannot_encode_gets_ascii_stand_ins(hostile: Path, encoding: str) -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "main.py"), "report", "--results", str(hostile)],
        capture_output=True, env={**os.environ, "PYTHONIOENCODING": encoding, "COLUMNS": "200"},
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in result.stderr and b"UnicodeEncodeError" not in result.stderr
    out = result.stdout.decode(encoding)
    if encoding == "ascii":
        assert " . GPU: none . python" in out and "+-" in out  # '·' and '±' as ASCII
    else:
        assert " · GPU: none · python" in out  # latin-1 holds '·': left as it is
    assert "case[/]\\x1b[2Jx" in out
