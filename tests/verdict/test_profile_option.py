"""`verdict --profile`: every round of every group is given --profile (an untimed pass after the timed samples);
with --from it measures nothing and is refused; a profiles folder that cannot be written is refused before the
first round."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.verdict import cli as verdict_cli
from jax_benchmarks.verdict.cli import RoundDone
from jax_benchmarks.verdict.scale import SCALES, Scale
from tests.conftest import invoke


def test_every_round_of_every_group_is_profiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plans: list[Scale] = []

    def fake_measure(scale: Scale, *_args: object, **_kwargs: object) -> list[RoundDone]:
        plans.append(scale)
        return []  # no round ran: the page says every group is missing

    monkeypatch.setattr(verdict_cli, "measure", fake_measure)
    invoke("verdict", "--scale", "quick", "--profile", "--results", str(tmp_path / "r.jsonl"))
    assert plans and [s.group for s in plans[0].steps] == [s.group for s in SCALES["quick"].steps]
    assert all(step.options[-1] == "--profile" and step.options[:-1] == unprofiled.options
               for step, unprofiled in zip(plans[0].steps, SCALES["quick"].steps, strict=True))


def test_profile_with_from_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "r.jsonl"
    store.write_text("")
    result = invoke("verdict", "--from", str(store), "--profile")
    assert result.exit_code == 2 and "'--profile'" in result.stderr and "measures nothing with --from" in result.stderr


def test_an_unwritable_profiles_folder_is_refused_before_the_first_round(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[Scale] = []
    monkeypatch.setattr(verdict_cli, "measure", lambda scale, *_a, **_k: started.append(scale) or [])
    (tmp_path / "profiles").write_text("a file where the folder would go: no one (root neither) writes into it")
    result = invoke("verdict", "--scale", "quick", "--profile", "--results", str(tmp_path / "r.jsonl"))
    assert result.exit_code == 2 and "'--profile'" in result.stderr and not started
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
