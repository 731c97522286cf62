"""A gate without a baseline (a first run, issue 38): in CI it exits 2, saying what to run next; in a
terminal it tells a person what to run next and ends normally."""

from __future__ import annotations

import pytest

from jax_benchmarks.report import cli as report_cli
from jax_benchmarks.report.cli import CannotJudge, first_comparison


def test_in_ci_nothing_judged_is_exit_2_with_the_next_step(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(CannotJudge) as raised:
        first_comparison("run it again with --rounds 3")
    assert raised.value.exit_code == 2 and "run it again with --rounds 3" in raised.value.message


def test_in_a_terminal_the_next_step_is_said_and_the_command_ends(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr("jax_benchmarks.cli.console.in_ci", lambda: False)
    first_comparison("run it again with --rounds 3")
    assert "run it again with --rounds 3" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["true", "1", "yes"])
def test_ci_is_told_by_its_variable_even_on_a_terminal(flag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.cli import console

    monkeypatch.setenv("CI", flag)
    assert console.in_ci()
    monkeypatch.setenv("CI", "false")
    assert console.in_ci() is (not (console.sys.stdout.isatty() and console.sys.stderr.isatty()))


def test_the_gate_names_the_command_to_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(CannotJudge) as raised:
        report_cli.check_time_regressions([], 10.0)
    assert "--rounds 3" in raised.value.message and "xla all --rounds 3" in raised.value.message
