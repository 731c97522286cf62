"""calibrate refuses a round command line that cannot work before the first round, with the reason on the
terminal (issue 47, item 6): a bad --options value, an option calibrate sets itself or one with which a round
measures nothing, and a group command calibrate cannot run. Each round's command line is parsed in this process
by the command itself; nothing is started."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.cli import relaunch
from jax_benchmarks.cli.commands import unavailable_command
from jax_benchmarks.frameworks.descriptors import TORCH
from jax_benchmarks.groups import GROUPS
from tests.conftest import invoke


class RoundStarted(Exception):
    """A round would have been started (the test stops there)."""


@pytest.fixture
def no_rounds(monkeypatch: pytest.MonkeyPatch) -> None:
    def started(*_args: Any, **_kwargs: Any) -> None:
        raise RoundStarted()

    monkeypatch.setattr(relaunch, "run_fresh", started)


@pytest.mark.parametrize(("steps", "options", "words"), [
    (["xla:numpy"], "--matrix-size abc", "xla:numpy cannot run with it: Invalid value for '--matrix-size': 'abc' is "
                                         "not a valid integer"),
    (["xla:numpy"], "--min-time nan", "Invalid value for '--min-time': nan is not a finite number"),
    (["xla:numpy"], "--min-time 0", "Invalid value for '--min-time': 0.0 is not allowed"),
    # click words this one differently across the supported range (8.2: "No such option: --x", 8.3: "No such
    # option '--x'"), so the row names the fragments every version prints.
    (["xla:numpy"], "--no-such-option", ("xla:numpy cannot run with it: No such option", "--no-such-option")),
    (["xla:numpy"], "--dtype float16", "Invalid value for '--dtype'"),
    (["xla:numpy", "jit:numpy"], "--matrix-size 64", ("jit:numpy cannot run with it: No such option", "--matrix-size")),
    (["scipy:numpy"], "--tol 2", "Invalid value for '--tol'"),
    (["xla:numpy"], "--rounds 3", "--rounds is set by calibrate itself"),
    (["xla:numpy"], "--results=elsewhere.jsonl", "--results is set by calibrate itself"),
    (["xla:numpy"], "--run-id x", "--run-id is set by calibrate itself"),
    (["xla:numpy"], "--threads 1", "--threads is set by calibrate itself"),
    (["xla:numpy"], "--list", "--list: the rounds would measure nothing"),
    (["xla:numpy"], "--help", "--help: the rounds would measure nothing"),
])
def test_a_round_that_cannot_work_is_refused_before_the_first(steps: list[str], options: str,
                                                             words: str | tuple[str, ...],
                                                             tmp_path: Path, no_rounds: None) -> None:
    result = invoke("calibrate", *steps, "--rounds", "6", "--options", options, "--results", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: Invalid value for '--options': "), result.stderr
    for fragment in (words,) if isinstance(words, str) else words:
        assert fragment in lines[0]
    assert not list(tmp_path.glob("calibrate-*.log")) and "round 1/" not in result.stderr


def test_a_command_whose_framework_is_missing_is_refused_before_the_first_round(
        tmp_path: Path, no_rounds: None, monkeypatch: pytest.MonkeyPatch) -> None:
    group = importlib.import_module(GROUPS["xla"].module).cli
    monkeypatch.setitem(group.commands, "pytorch", unavailable_command("xla pytorch", TORCH.needs, "PyTorch."))
    result = invoke("calibrate", "xla:pytorch", "--rounds", "6", "--results", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert "xla:pytorch cannot run with it: xla pytorch is unavailable" in result.stderr
    assert not list(tmp_path.glob("calibrate-*.log"))


@pytest.mark.parametrize("options", ["", "--matrix-size 64 --dtype float32", "--min-time=0.05 -k matmul"])
def test_a_round_that_can_work_is_started(options: str, tmp_path: Path, no_rounds: None) -> None:
    result = invoke("calibrate", "xla:numpy", "--rounds", "6", "--options", options,
                    "--results", str(tmp_path / "r.jsonl"))
    assert isinstance(result.exception, RoundStarted), (result.stdout, result.stderr)
