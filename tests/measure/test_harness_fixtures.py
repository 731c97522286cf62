"""Suite fixtures: shared state built on first use, handed to prepare and judge, torn down once no case
still to run needs it and, whatever is left, however the suite ends."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import (RECORDS, Case, Fixture, Judgement, Suite, SuiteRecords, Target, Timed,
                                            run_cases, run_suite)
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records

TARGET = Target("numpy", "cpu")


class Events:
    """What happened, in order: builds, teardowns, prepares, judges."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def fixture(self, name: str, value: Any, needs: tuple[Fixture[Any], ...] = ()) -> Fixture[Any]:
        def setup(*needed: Any) -> Any:
            self.seen.append(f"build {name}{list(needed) if needed else ''}")
            return value

        return Fixture(name, setup, needs=needs, teardown=lambda v: self.seen.append(f"teardown {name}={v}"))

    def case(self, name: str, *, result: object = 0, uses: tuple[Fixture[Any], ...] = (),
             provides: Fixture[Any] | None = None, failure: str | None = None, variant: str | None = None,
             raises: Exception | None = None) -> Case[Any]:
        def prepare(*values: Any) -> Timed[Any]:
            self.seen.append(f"prepare {name}{list(values) if values else ''}")
            if raises is not None:
                raise raises
            return Timed(lambda: result)

        def judge(value: Any, _m: Measurement, *values: Any) -> Judgement:
            self.seen.append(f"judge {name}{list(values) if values else ''}")
            return Judgement(failures=[failure] if failure else [])

        return Case(name, prepare, judge, uses=uses, provides=provides, variant=variant,
                    cannot_run=(NotImplementedError,))


def run_in(tmp_path: Path) -> Run:
    return Run("test", tmp_path / "results.jsonl")


def test_a_fixture_is_built_once_on_first_use_and_handed_to_prepare_and_judge(tmp_path: Path) -> None:
    events = Events()
    data, model = events.fixture("data", "D"), events.fixture("model", "M")
    cases = [events.case("a_1_float32"), events.case("b_1_float32", uses=(data, model)),
             events.case("c_1_float32", uses=(data,))]
    run_cases(run_in(tmp_path), TARGET, cases, repeats=1, fixtures=[data, model])
    assert events.seen == [
        "prepare a_1_float32", "judge a_1_float32",
        "build data", "build model", "prepare b_1_float32['D', 'M']", "judge b_1_float32['D', 'M']",
        "teardown model=M",  # no case still to run uses the model
        "prepare c_1_float32['D']", "judge c_1_float32['D']", "teardown data=D",
    ]


def test_a_case_selected_alone_still_gets_its_fixtures_and_their_needs(tmp_path: Path) -> None:
    events = Events()
    pair = events.fixture("pair", "AB")
    product = events.fixture("product", "C", needs=(pair,))
    cases = [events.case("uniform_1_float32", provides=pair), events.case("matmul_1_float32", uses=(pair,)),
             events.case("inverse_1_float32", uses=(product,))]
    run_cases(run_in(tmp_path), TARGET, cases, repeats=1, patterns=("inverse",), fixtures=[pair, product])
    # The pair is needed only to build the product: it is gone before the inverse is prepared.
    assert events.seen == ["build pair", "build product['AB']", "teardown pair=AB",
                           "prepare inverse_1_float32['C']", "judge inverse_1_float32['C']", "teardown product=C"]


def test_a_providing_case_hands_its_timed_result_over_instead_of_a_second_build(tmp_path: Path) -> None:
    events = Events()
    pair = events.fixture("pair", "built")
    cases = [events.case("uniform_1_float32", result="timed", provides=pair),
             events.case("mean_1_float32", uses=(pair,)), events.case("sum_1_float32", uses=(pair,))]
    run = run_in(tmp_path)
    run_cases(run, TARGET, cases, repeats=2, fixtures=[pair])
    assert "build pair" not in events.seen
    assert events.seen[-3:] == ["prepare sum_1_float32['timed']", "judge sum_1_float32['timed']",
                                "teardown pair=timed"]
    assert [r.case for r in read_records(run.results.path, warn=pytest.fail)] == [c.name for c in cases]


def test_a_provided_value_replaces_one_built_earlier_which_is_torn_down(tmp_path: Path) -> None:
    events = Events()
    pair = events.fixture("pair", "built")
    cases = [events.case("mean_1_float32", uses=(pair,)), events.case("uniform_1_float32", result="timed", provides=pair),
             events.case("sum_1_float32", uses=(pair,))]
    run_cases(run_in(tmp_path), TARGET, cases, repeats=1, fixtures=[pair])
    assert events.seen.index("teardown pair=built") < events.seen.index("prepare sum_1_float32['timed']")


def test_fixtures_are_torn_down_when_a_check_fails_inside_the_suites_context(tmp_path: Path) -> None:
    events = Events()
    on = [False]

    @contextmanager
    def mode() -> Iterator[None]:
        on[0] = True
        try:
            yield
        finally:
            on[0] = False

    data = Fixture("data", lambda: "D", teardown=lambda v: events.seen.append(f"teardown data with mode {on[0]}"))
    cases = [events.case("a_1_float32", uses=(data,), failure="wrong"), events.case("b_1_float32", uses=(data,))]
    suite = Suite(TARGET, cases, fixtures=[data], context=mode)
    with pytest.raises(CheckFailed, match="wrong"):
        run_suite(run_in(tmp_path), suite, repeats=1)
    assert events.seen[-1] == "teardown data with mode True" and not on[0]


def test_fixtures_are_torn_down_when_a_case_raises(tmp_path: Path) -> None:
    events = Events()
    data, model = events.fixture("data", "D"), events.fixture("model", "M")
    cases = [events.case("a_1_float32", uses=(data, model), raises=RuntimeError("out of memory")),
             events.case("b_1_float32", uses=(data, model))]
    with pytest.raises(RuntimeError, match="out of memory"):
        run_cases(run_in(tmp_path), TARGET, cases, repeats=1, fixtures=[data, model])
    assert events.seen[-2:] == ["teardown model=M", "teardown data=D"]  # newest first


def test_every_teardown_runs_and_the_first_error_is_raised(tmp_path: Path) -> None:
    torn: list[str] = []

    def broken(_value: object) -> None:
        torn.append("first")
        raise OSError("cannot free")

    first = Fixture("first", lambda: 1, teardown=broken)
    second = Fixture("second", lambda: 2, teardown=lambda v: torn.append("second"))
    events = Events()
    suite = Suite(TARGET, [events.case("a_1_float32", uses=(first, second))], fixtures=[first, second],
                  after=lambda run, a, b: torn.append(f"after {a} {b}"), after_uses=(first, second))
    with pytest.raises(OSError, match="cannot free"):
        run_suite(run_in(tmp_path), suite, repeats=1)
    assert torn == ["after 1 2", "second", "first"]


def test_after_receives_its_fixtures_which_live_until_it_ran(tmp_path: Path) -> None:
    events = Events()
    model = events.fixture("model", "M")
    suite = Suite(TARGET, [events.case("train_1_float32", uses=(model,)), events.case("other_1_float32")],
                  fixtures=[model], after=lambda run, m: events.seen.append(f"after {m}"), after_uses=(model,))
    run_suite(run_in(tmp_path), suite, repeats=1)
    assert events.seen[-3:] == ["judge other_1_float32", "after M", "teardown model=M"]


def test_fixtures_of_a_variant_that_cannot_run_are_released(tmp_path: Path) -> None:
    events = Events()
    compiled = events.fixture("compiled", "K")
    cases = [events.case("f_1_float32", uses=(compiled,), variant="compile", raises=NotImplementedError("no compiler")),
             events.case("f_2_float32", uses=(compiled,), variant="compile"),
             events.case("f_1_float32", variant="eager")]
    run_cases(run_in(tmp_path), TARGET, cases, repeats=1, fixtures=[compiled])
    assert events.seen == ["build compiled", "prepare f_1_float32['K']", "teardown compiled=K",
                           "prepare f_1_float32", "judge f_1_float32"]


def test_an_undeclared_or_twice_declared_fixture_is_refused(tmp_path: Path) -> None:
    events = Events()
    data = events.fixture("data", "D")
    with pytest.raises(ValueError, match="case a_1_float32 refers to fixture data, which its suite does not declare"):
        run_cases(run_in(tmp_path), TARGET, [events.case("a_1_float32", uses=(data,))], repeats=1)
    model = events.fixture("model", "M", needs=(data,))
    with pytest.raises(ValueError, match="fixture model refers to fixture data"):
        run_cases(run_in(tmp_path), TARGET, [], repeats=1, fixtures=[model])
    with pytest.raises(ValueError, match="declared twice on one suite: data"):
        run_cases(run_in(tmp_path), TARGET, [], repeats=1, fixtures=[data, events.fixture("data", "E")])
    assert events.seen == []  # nothing was built or run


def test_a_chain_of_needs_holds_no_more_than_the_next_build_needs(tmp_path: Path) -> None:
    events = Events()
    pair = events.fixture("pair", "AB")
    product = events.fixture("product", "C", needs=(pair,))
    inverse = events.fixture("inverse", "Ci", needs=(product,))
    cases = [events.case("residual_1_float32", uses=(product, inverse))]
    run_cases(run_in(tmp_path), TARGET, cases, repeats=1, fixtures=[pair, product, inverse])
    assert events.seen == ["build pair", "build product['AB']", "teardown pair=AB", "build inverse['C']",
                           "prepare residual_1_float32['C', 'Ci']", "judge residual_1_float32['C', 'Ci']",
                           "teardown inverse=Ci", "teardown product=C"]


def test_records_show_a_fixture_this_suites_earlier_records_and_subscribers_each_new_one(tmp_path: Path) -> None:
    """RECORDS: the harness's own fixture, a read-only view of what this suite recorded so far (not what an earlier
    suite of the run recorded), the judgements' outputs with them; a subscriber sees each record as it is written."""
    run = run_in(tmp_path)
    run.record(backend="numpy", case="median_1_float32", device="cpu")  # an earlier suite's: not this one's
    followed: list[tuple[str, object]] = []

    def first_median(records: SuiteRecords) -> float | None:
        records.subscribe(lambda record, output: followed.append((record.case, output)))
        record = records.last("median_1_float32", None)
        return record.median_s if record is not None else None

    earlier = Fixture("earlier median", first_median, needs=(RECORDS,))
    seen: list[object] = []
    cases = [
        Case("median_1_float32", lambda: Timed(lambda: 1), lambda *_: Judgement(output="kept")),
        Case("next_1_float32", lambda median, records: Timed(lambda: 2),
             lambda _r, _m, median, records: seen.extend(
                 [median, records.count("median_1_float32", None), records.output("median_1_float32", None)])
             or Judgement(), uses=(earlier, RECORDS)),
    ]
    run_suite(run, Suite(TARGET, cases, fixtures=[earlier]), repeats=1)
    median = next(r for r in run.records[1:] if r.case == "median_1_float32").median_s
    assert seen == [median, 1, "kept"]
    assert followed == [("next_1_float32", None)]  # subscribed once the first case was recorded


def test_a_run_that_does_not_record_keeps_its_records_in_memory_only(tmp_path: Path) -> None:
    run = Run("test", tmp_path / "results.jsonl", recording=False)
    run_suite(run, Suite(TARGET, [Case("a_1_float32", lambda: Timed(lambda: 1))]), repeats=1)
    assert [r.case for r in run.records] == ["a_1_float32"]
    assert not (tmp_path / "results.jsonl").exists()
