"""The harness hands a case's output on explicitly (`Judgement.output` -> `run.outputs`) and enters a
suite's `context` around exactly that suite."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import Case, Judgement, Suite, Target, Timed, run_suite
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records

TARGET = Target("numpy", "cpu")


def test_an_output_is_kept_next_to_its_record_and_never_written(tmp_path: Path) -> None:
    run = Run("test", tmp_path / "results.jsonl")
    cases = [
        Case("sum_4_float64", lambda: Timed(lambda: [1.0, 2.0]), variant="a",
             judge=lambda r, m: Judgement(checks={"first": r[0]}, output=tuple(r))),
        Case("sum_4_float64", lambda: Timed(lambda: [3.0]), variant="b"),  # hands nothing on
    ]
    run_suite(run, Suite(TARGET, cases), repeats=1)
    assert [(o.record.variant, o.value) for o in run.outputs] == [("a", (1.0, 2.0))]
    assert run.outputs[0].record is run.records[0]
    written = list(read_records(run.results.path, warn=pytest.fail))
    assert [r.variant for r in written] == ["a", "b"]
    assert "output" not in written[0].model_dump() and written[0].checks == {"first": 1.0}


def test_context_is_entered_around_before_the_cases_and_after_and_left_on_failure(tmp_path: Path) -> None:
    run = Run("test", tmp_path / "results.jsonl")
    events: list[str] = []
    inside: list[bool] = []

    @contextmanager
    def mode() -> Iterator[None]:
        events.append("enter")
        inside.append(True)
        try:
            yield
        finally:
            inside.pop()
            events.append("exit")

    def prepare() -> Timed[int]:
        events.append(f"prepare inside={bool(inside)}")
        return Timed(lambda: 1)

    suite = Suite(TARGET, [Case("f_1_float64", prepare)], before=lambda _: events.append(f"before inside={bool(inside)}"),
                  after=lambda _: events.append(f"after inside={bool(inside)}"), context=mode)
    run_suite(run, suite, repeats=1)
    assert events == ["enter", "before inside=True", "prepare inside=True", "after inside=True", "exit"]

    events.clear()
    failing = Suite(TARGET, [Case("f_1_float64", prepare, judge=lambda r, m: Judgement(failures=["off"]))], context=mode)
    with pytest.raises(CheckFailed, match="off"):
        run_suite(run, failing, repeats=1)
    assert events == ["enter", "prepare inside=True", "exit"] and inside == []
