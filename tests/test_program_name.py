"""Hints name the command as the user invoked it (issue 38): `python main.py ...` in a checkout, `jax-benchmarks
...` where the package is installed. `main` takes the name from sys.argv[0] and gives it to click as the
program's name; the hint of an error raised below the CLI layer is written with it where the error is printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.cli.console import invoked_as

ROOT = Path(__file__).resolve().parents[1]
# The installed script as pip writes it: it imports main and calls it, with sys.argv[0] its own path.
AS_INSTALLED_SCRIPT = """
import sys
sys.argv[0] = "/usr/local/bin/jax-benchmarks"
from jax_benchmarks.cli.root import main
main(sys.argv[1:])
"""


def run_as(spelling: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    start = [sys.executable, str(ROOT / "main.py")] if spelling == "python main.py" else \
        [sys.executable, "-c", AS_INSTALLED_SCRIPT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    return subprocess.run([*start, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.mark.parametrize(("argv0", "program"), [
    ("/home/u/.venv/bin/jax-benchmarks", "jax-benchmarks"),
    ("main.py", "python main.py"),
    ("/home/u/jax-benchmarks/main.py", "python main.py"),
    ("/site-packages/jax_benchmarks/__main__.py", "python -m jax_benchmarks"),
])
def test_the_program_is_named_from_how_python_was_started(argv0: str, program: str) -> None:
    assert invoked_as(argv0) == program


@pytest.mark.parametrize("spelling", ["python main.py", "jax-benchmarks"])
@pytest.mark.parametrize("store", ["missing.sqlite", "missing.jsonl", "empty.sqlite"])
def test_a_store_with_no_results_yet_hints_at_the_command_as_invoked(spelling: str, store: str,
                                                                      tmp_path: Path) -> None:
    if store.startswith("empty"):
        (tmp_path / store).touch()
    done = run_as(spelling, "report", "--results", str(tmp_path / store), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: Invalid value for '--results': "), line
    assert line.endswith(f"run a benchmark first (e.g. `{spelling} xla all`)"), line


@pytest.mark.parametrize("spelling", ["python main.py", "jax-benchmarks"])
def test_a_verdict_from_an_empty_store_hints_at_the_command_as_invoked(spelling: str, tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").touch()
    done = run_as(spelling, "verdict", "--from", str(tmp_path / "empty.jsonl"), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert "no benchmark records in" in line and line.endswith(f"run a benchmark first (e.g. `{spelling} xla all`)")


@pytest.mark.parametrize("spelling", ["python main.py", "jax-benchmarks"])
def test_usage_lines_name_the_command_as_invoked(spelling: str, tmp_path: Path) -> None:
    done = run_as(spelling, "xla", "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Usage: {spelling} xla "), done.stdout[:200]


@pytest.mark.parametrize("args", [[], ["verdict"], ["report"], ["smoke"], ["calibrate"], ["mnist"], ["autograd"]])
def test_the_help_examples_name_the_program_as_invoked(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from jax_benchmarks.cli.root import cli
    from jax_benchmarks.errors import run_cli

    assert run_cli(cli, [*args, "--help"], "jax-benchmarks") == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "python main.py" not in shown
    assert f"jax-benchmarks {' '.join(args[:1])}".strip() + " " in shown.split("Example", 1)[1]
    assert run_cli(cli, [*args, "--help"], "python main.py") == 0  # a checkout's spelling is kept
    assert "Example" in capsys.readouterr().out
