"""The "no results yet" hint of verdict's --from and --against names the program as the user invoked it
(issue 47, item 7; report's --results did already: tests/test_program_name.py). In process: `run_cli` is given
the program's name as `main` gives it."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.cli.root import cli
from jax_benchmarks.errors import run_cli
from tests.report.fixtures import write_results
from tests.verdict.fixtures import matmul


@pytest.mark.parametrize("program", ["python main.py", "python -m jax_benchmarks", "jax-benchmarks"])
@pytest.mark.parametrize(("option", "store"), [("--from", "missing.jsonl"), ("--from", "missing.sqlite"),
                                               ("--against", "missing.jsonl"), ("--against", "gone/missing.sqlite")])
def test_a_missing_store_hints_at_the_command_as_invoked(program: str, option: str, store: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    present = write_results(tmp_path / "present.jsonl", matmul(1.0, 0.5))
    argv = ["verdict", "--from", str(tmp_path / store)] if option == "--from" else \
        ["verdict", "--from", str(present), "--against", str(tmp_path / store)]
    assert run_cli(cli, argv, program) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"Error: Invalid value for '{option}': "), line
    assert line.endswith(f"run a benchmark first (e.g. `{program} xla all`)"), line
