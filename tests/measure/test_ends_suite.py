"""A judgement whose failed check makes the rest of its suite meaningless (a diverged training) ends the suite:
it is recorded with its failed check, no later case runs, `after` does not run, and the failure is raised."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed, run_suite
from jax_benchmarks.run import Run


def test_a_failed_check_that_ends_the_suite_stops_it_once_recorded(tmp_path: Path) -> None:
    ran: list[str] = []
    lines: list[str] = []

    def case(name: str, judgement: Judgement) -> Case[None]:
        return Case(name, lambda: Timed(lambda: ran.append(name), once=True), lambda _r, _m: judgement)

    diverged = Judgement(checks={"loss_finite": False}, failures=["training diverged"], ends_suite=True)
    suite = Suite(Target("numpy", "cpu"), [case("epoch_1_float32", Judgement()), case("epoch_2_float32", diverged),
                                           case("epoch_3_float32", Judgement())],
                  after=lambda _run: ran.append("after"))
    run = Run("test", tmp_path / "results.jsonl", log=lines.append)
    with pytest.raises(CheckFailed, match="numpy epoch_2_float32 @cpu: training diverged"):
        run_suite(run, suite, repeats=1)
    assert ran == ["epoch_1_float32", "epoch_2_float32"]
    assert [(r.case, dict(r.checks)) for r in run.records] == [("epoch_1_float32", {}),
                                                                 ("epoch_2_float32", {"loss_finite": False})]
    assert "skipped: numpy: the 1 later case(s), after epoch_2_float32's failed check" in lines


def test_a_passing_judgement_that_may_end_the_suite_does_not(tmp_path: Path) -> None:
    ran: list[str] = []
    fine = Judgement(checks={"loss_finite": True}, ends_suite=True)
    cases = [Case(f"epoch_{n}_float32", lambda n=n: Timed(lambda: ran.append(str(n)), once=True),
                  lambda _r, _m: fine) for n in (1, 2)]
    run_suite(Run("test", tmp_path / "results.jsonl"), Suite(Target("numpy", "cpu"), cases), repeats=1)
    assert ran == ["1", "2"]
