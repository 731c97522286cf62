"""A suite's `context`: entered once around before, every case and after; left however the suite ends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed, run_suite
from jax_benchmarks.run import Run


class Mode:
    def __init__(self) -> None:
        self.on = False
        self.entered = 0
        self.seen: list[str] = []

    @contextmanager
    def context(self) -> Iterator[None]:
        self.entered += 1
        self.on = True
        try:
            yield
        finally:
            self.on = False

    def case(self, name: str, failure: str | None = None) -> Case[bool]:
        def prepare() -> Timed[bool]:
            self.seen.append(f"prepare {name} {self.on}")
            return Timed(lambda: self.on)

        def judge(on_in_call: bool, _: object) -> Judgement:
            self.seen.append(f"judge {name} {on_in_call} {self.on}")
            return Judgement(failures=[failure] if failure else [])

        return Case(name, prepare, judge)  # type: ignore[arg-type]


def test_context_is_on_for_the_whole_suite_and_entered_once(tmp_path: Path) -> None:
    mode = Mode()
    suite = Suite(Target("jax", "cpu"), [mode.case("a_1_float64"), mode.case("b_1_float64")],
                  before=lambda run: mode.seen.append(f"before {mode.on}"),
                  after=lambda run: mode.seen.append(f"after {mode.on}"), context=mode.context)
    run_suite(Run("t", tmp_path / "r.jsonl"), suite, repeats=2)
    assert mode.seen == ["before True", "prepare a_1_float64 True", "judge a_1_float64 True True",
                         "prepare b_1_float64 True", "judge b_1_float64 True True", "after True"]
    assert mode.entered == 1 and not mode.on


def test_context_is_left_when_a_check_fails(tmp_path: Path) -> None:
    mode = Mode()
    suite = Suite(Target("jax", "cpu"), [mode.case("a_1_float64", failure="wrong")], context=mode.context)
    with pytest.raises(CheckFailed, match="jax a_1_float64 @cpu: wrong"):
        run_suite(Run("t", tmp_path / "r.jsonl"), suite, repeats=1)
    assert not mode.on
