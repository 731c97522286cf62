"""A gate without a baseline (a first run): nothing was judged, so it exits 2 wherever it runs (a check that
cannot judge never passes), and its one line says what to run next, with the command as the user invoked it."""

from __future__ import annotations

import pytest

from jax_benchmarks.report import cli as report_cli
from jax_benchmarks.report.cli import CannotJudge


@pytest.mark.parametrize("ci", ["true", None])
def test_a_first_run_is_exit_2_with_the_next_step(ci: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(CannotJudge) as raised:
        report_cli.check_time_regressions([], 10.0)
    assert raised.value.exit_code == 2
    assert "run the benchmark again" in raised.value.message
    assert "--rounds 3" in raised.value.message


@pytest.mark.parametrize("program", ["jax-benchmarks", "python main.py"])
def test_the_gate_names_the_command_as_invoked(program: str) -> None:
    with pytest.raises(CannotJudge) as raised:
        report_cli.check_time_regressions([], 10.0, program)
    assert f"`{program} xla all --rounds 3`" in raised.value.message
