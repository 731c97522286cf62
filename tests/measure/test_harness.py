"""The one harness: selection, order, skip-with-reason, compile apart, records, checks after recording."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.harness import Case, Judgement, Target, Timed, matches, run_cases
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records

TARGET = Target("numpy", "cpu")


class Calls:
    def __init__(self) -> None:
        self.prepared: list[str] = []

    def case(self, name: str, value: int = 1, **fields: object) -> Case[int]:
        def prepare() -> Timed[int]:
            self.prepared.append(name)
            return Timed(lambda: value)

        return Case(name, prepare, **fields)  # type: ignore[arg-type]


def run_in(tmp_path: Path) -> tuple[Run, list[str]]:
    lines: list[str] = []
    return Run("test", tmp_path / "results.jsonl", log=lines.append), lines


def test_every_case_is_timed_judged_and_recorded_in_order(tmp_path: Path) -> None:
    calls = Calls()
    run, _ = run_in(tmp_path)
    cases = [
        calls.case("sum_10_float64", 3, judge=lambda r, m: Judgement(checks={"value": r}, metrics={"x": 2 * r})),
        calls.case("matmul_10x10_float64", 5, dtype="float64", params={"matrix_size": 10}),
    ]
    run_cases(run, TARGET, cases, repeats=3)
    assert calls.prepared == ["sum_10_float64", "matmul_10x10_float64"]
    records = list(read_records(run.results.path, warn=pytest.fail))
    assert [r.case for r in records] == ["sum_10_float64", "matmul_10x10_float64"]
    assert records[0].checks == {"value": 3} and records[0].metrics["x"] == 6
    assert records[1].dtype == "float64" and records[1].params == {"matrix_size": 10}
    assert all(r.repeats >= 3 and r.backend == "numpy" and r.device == "cpu" for r in records)
    assert records[0].compile_s is None  # not a compiled case


def test_pattern_selects_by_substring_glob_or_variant_label() -> None:
    calls = Calls()
    case = calls.case("f_1000_float32", variant="jit")
    assert matches(case, ())
    assert matches(case, ("f_1000",)) and matches(case, ("f_*_float32",)) and matches(case, ("[jit]",))
    assert not matches(case, ("matmul",)) and not matches(case, ("f_10_*",))


def test_unselected_cases_are_not_prepared_and_are_counted_in_one_line(tmp_path: Path) -> None:
    calls = Calls()
    run, lines = run_in(tmp_path)
    run_cases(run, TARGET, [calls.case("mean_2x4x4_float32"), calls.case("matmul_4x4_float32")],
              repeats=1, patterns=("matmul",))
    assert calls.prepared == ["matmul_4x4_float32"]
    assert [r.case for r in run.records] == ["matmul_4x4_float32"]
    assert [line for line in lines if "not selected" in line] == [
        "skipped: numpy: 1 of 2 case(s) not selected by -k matmul"]


def test_a_variant_that_cannot_run_is_skipped_with_its_reason_everywhere(tmp_path: Path) -> None:
    run, lines = run_in(tmp_path)

    def broken() -> Timed[int]:
        raise RuntimeError("no C compiler\nmore detail")

    cases = [Case(f"f_{n}_float32", broken, variant="compile", cannot_run=(RuntimeError,)) for n in (10, 100)]
    cases.insert(1, Case("f_10_float32", lambda: Timed(lambda: 1), variant="eager"))
    run_cases(run, TARGET, cases, repeats=1)
    assert [(r.case, r.variant) for r in run.records] == [("f_10_float32", "eager")]
    skipped = [line for line in lines if line.startswith("skipped")]
    assert len(skipped) == 2 and all("RuntimeError: no C compiler" in line for line in skipped)


def test_failed_checks_raise_after_every_case_is_recorded(tmp_path: Path) -> None:
    calls = Calls()
    run, _ = run_in(tmp_path)
    cases = [
        calls.case("a_1_float32", judge=lambda r, m: Judgement(failures=["mean 0.7 outside 0.5 ± 0.01"])),
        calls.case("b_1_float32"),
    ]
    with pytest.raises(CheckFailed, match=r"numpy a_1_float32 @cpu: mean 0\.7 outside"):
        run_cases(run, TARGET, cases, repeats=1)
    assert [r.case for r in run.records] == ["a_1_float32", "b_1_float32"]


def test_compile_time_apart_and_speedup_over_a_variant(tmp_path: Path) -> None:
    import time

    run, _ = run_in(tmp_path)
    first = [True]

    def compiling() -> int:
        if first[0]:
            first[0] = False
            time.sleep(0.05)  # the first call traces and compiles
        return 1

    cases = [
        Case("f_10_float32", lambda: Timed(lambda: time.sleep(0.002)), variant="eager"),
        Case("f_10_float32", lambda: Timed(compiling), variant="jit", compiled=True, speedup_over="eager"),
    ]
    run_cases(run, TARGET, cases, repeats=2)
    eager, jit = run.records
    assert eager.compile_s is None and "speedup" not in eager.metrics
    assert jit.compile_s is not None and jit.compile_s >= 0.04
    assert jit.metrics["speedup"] == pytest.approx(eager.median_s / jit.median_s)  # type: ignore[operator]


def test_once_is_timed_a_single_time(tmp_path: Path) -> None:
    run, _ = run_in(tmp_path)
    count = [0]

    def epoch() -> int:
        count[0] += 1
        return count[0]

    run_cases(run, TARGET, [Case("epoch_1_float32", lambda: Timed(epoch, once=True))], repeats=5)
    assert count[0] == 1 and run.records[0].repeats == 1


class Recorded:
    def __init__(self) -> None:
        self.events: list[str] = []

    def start(self, label: str, total: int) -> None:
        self.events.append(f"start {label} {total}")

    def advance(self, detail: str = "") -> None:
        self.events.append(f"advance {detail}")

    def stop(self) -> None:
        self.events.append("stop")


def test_progress_travels_on_the_run(tmp_path: Path) -> None:
    progress = Recorded()
    run = Run("test", tmp_path / "r.jsonl", progress=progress)
    run_cases(run, TARGET, [Case("a_1_x", lambda: Timed(lambda: 1)), Case("b_1_x", lambda: Timed(lambda: 1))],
              repeats=1)
    assert progress.events == ["start numpy @cpu 2", "advance a_1_x", "advance b_1_x", "stop"]


def test_fixed_runs_time_each_run_with_untimed_preparation_before_it(tmp_path: Path) -> None:
    """Training epochs: exactly `runs` calls, the first apart, `before_each` before every one."""
    run, _ = run_in(tmp_path)
    events: list[str] = []

    def epoch() -> int:
        events.append("run")
        return events.count("run")

    def prepare() -> Timed[int]:
        return Timed(epoch, runs=3, before_each=lambda: events.append("prepare"))

    measured = run_cases(run, TARGET, [Case("mlp_epoch_8x2_float32", prepare, compiled=True,
                                            judge=lambda r, m: Judgement(metrics={"last": r}))], repeats=5)
    assert events == ["prepare", "run"] * 3
    m = measured["mlp_epoch_8x2_float32"]
    assert m.repeats == 2 and m.first_call_s is not None and m.warmup == 0
    [record] = run.records
    assert record.metrics["last"] == 3 and record.compile_s is not None


def test_a_single_fixed_run_is_one_sample_without_compile_time(tmp_path: Path) -> None:
    run, _ = run_in(tmp_path)
    measured = run_cases(run, TARGET, [Case("cnn_epoch_8x28x28x1_float32", lambda: Timed(lambda: 1, runs=1),
                                            compiled=True)], repeats=5)
    m = measured["cnn_epoch_8x28x28x1_float32"]
    assert m.repeats == 1 and m.first_call_s is None and run.records[0].compile_s is None


def test_relative_error_and_difference() -> None:
    from jax_benchmarks.measure.relative import relative_difference, relative_error

    assert relative_error(1.1, 1.0) == pytest.approx(0.1)
    assert relative_error(0.9, -1.0) == pytest.approx(1.9)
    assert relative_error(1e-3, 0.0) == pytest.approx(1e9)  # a zero reference stays finite
    assert relative_difference(1.0, 2.0) == relative_difference(2.0, 1.0) == pytest.approx(0.5)


def test_min_time_sets_how_long_a_figure_samples(tmp_path: Path) -> None:
    # `--min-time`: a 2 ms call sampled for at least 0.3 s gives at least 150 samples' worth of calls; the
    # default window (0.2 s) gives fewer. Samples of a short call are blocks of calls (`block_s`), so the
    # time sampled is samples × calls per sample × the call's time.
    run, _ = run_in(tmp_path)

    def busy_2ms() -> None:
        end = time.perf_counter() + 0.002
        while time.perf_counter() < end:
            pass

    measured = run_cases(run, TARGET, [Case("spin_2ms", lambda: Timed(busy_2ms))], repeats=1, min_time_s=0.3)
    default = run_cases(run, TARGET, [Case("spin_2ms", lambda: Timed(busy_2ms))], repeats=1)
    sampled = {label: sum(m.samples_s) * m.calls_per_sample for label, m in measured.items()}
    assert all(seconds >= 0.3 for seconds in sampled.values()), sampled
    assert all(sum(m.samples_s) * m.calls_per_sample < 0.3 for m in default.values())
