"""The one harness shape every group uses: a backend declares its cases, the core runs them.

Learned from JAX's `benchmarks/` and asv: the harness owns the loop and the statistics, a case is a
small function. A backend builds a list of `Case`s for one `Target` (its column and device) and hands
it to `run_cases`, which for each case, in order:

1. skips it when `--case/-k` does not select it, or when an earlier case of the same variant found
   that the variant cannot run here (the reason is logged, the figure is never faked);
2. calls `prepare()`: builds the inputs, untimed, and returns the `Timed` call;
3. times it through `jax_benchmarks.measure.timing` (first call apart as compile time, warm-up, sync, repeats),
   or once for work that can only be done once (a whole solve), or a fixed number of runs for work
   that changes from run to run (training epochs);
4. takes its memory figures (`jax_benchmarks.measure.memory`) without touching the timed calls: in a
   separate, untimed call of the same `Timed` after the samples (as asv's `peakmem_`), the last timed
   result dropped first; or, for work done once or a fixed number of times, around that timed work
   (the peak is reset before the first call and read after the last, outside every timed region);
   and the compiled program's memory where the `Timed` says how to obtain it;
5. `judge`s the last result (of the memory pass where there is one): checks, metrics and failures;
6. writes the record, keeps the judgement's `output` next to it on `run.outputs` (for a later step of the
   run, e.g. a cross-backend comparison), logs the case's notes, and reports progress;

and, once every selected case is recorded, raises `CheckFailed` naming every broken check. Nothing
measured is lost to a failed check.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import Any, Generic, TypeVar

from rich.markup import escape

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.memory import AROUND_TIMED_RUN, SEPARATE_PASS, Probe, compiled_figures
from jax_benchmarks.measure.progress import Progress
from jax_benchmarks.store.results import Output, Record, Run, Scalar
from jax_benchmarks.measure.timing import Measurement, Sync, measure, no_sync, single, time_call, time_runs

R = TypeVar("R")


@dataclass(frozen=True)
class Timed(Generic[R]):
    """The call a case times, with its inputs already built; it returns an unsynchronized result."""

    call: Callable[[], R]
    sync: Sync = no_sync
    # Work that can only be done once per run (an epoch, a whole solve): timed by one `time_call`.
    once: bool = False
    # Exactly the first call, one warm-up and `repeats` samples of one call each, never calibrated by time:
    # every process of a multi-process job must make as many calls (each ends in a collective).
    fixed_count: bool = False
    # Work that changes from call to call (training epoch 1, 2, ...): timed exactly `runs` times by
    # `jax_benchmarks.measure.timing.time_runs`, `before_each()` untimed before each; the first run is reported
    # apart, the others are the samples.
    runs: int | None = None
    before_each: Callable[[], object] | None = None
    # How the compiled program of `call` is obtained, for its memory analysis (e.g.
    # `memory.jax_program(jitted, *args)`; `lambda: memory.TORCH_COMPILE` where there is none); None: not compiled.
    program: Callable[[], object] | None = None

    @property
    def single_pass(self) -> bool:
        """Work that must not be called more often than timed: its memory is read around the timed work."""
        return self.once or self.runs is not None or self.fixed_count


@dataclass(frozen=True)
class Judgement:
    """What a case's result says: recorded checks and metrics, failed checks, and lines to log.

    `output` is what a later step of the same run needs from this case beyond the record (e.g. the
    values `autograd all` compares across backends): the harness keeps it next to the record on
    `run.outputs`; it is never written to the results file. None keeps nothing.
    """

    checks: Mapping[str, Scalar] = field(default_factory=dict)
    metrics: Mapping[str, Scalar] = field(default_factory=dict)
    failures: Sequence[str] = ()
    # What the run found out about the case's inputs (e.g. which source the data came from), recorded
    # with the case's own params.
    params: Mapping[str, Scalar] = field(default_factory=dict)
    notes: Sequence[str] = ()
    output: object = None


def no_judgement(_result: object, _measurement: Measurement) -> Judgement:
    return Judgement()


@dataclass(frozen=True)
class Case(Generic[R]):
    """One named figure: `name` follows `{op}_{shape}_{dtype}` (e.g. matmul_1000x1000_float64)."""

    name: str
    prepare: Callable[[], Timed[R]]
    judge: Callable[[R, Measurement], Judgement] = no_judgement
    variant: str | None = None  # e.g. eager / jit / compile, shown next to the backend
    dtype: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    # The first call includes tracing and compilation: its extra cost is recorded as compile_s.
    compiled: bool = False
    # Exceptions meaning "this variant cannot run here" (e.g. torch.compile without a working compiler):
    # the case and every later case of the same variant are skipped with the reason.
    cannot_run: tuple[type[Exception], ...] = ()
    # Record `speedup` = median of this variant of the same case / this case's median.
    speedup_over: str | None = None

    @property
    def label(self) -> str:
        return self.name if self.variant is None else f"{self.name} [{self.variant}]"


@dataclass(frozen=True)
class Target:
    """Who runs the cases: the backend column and the device kind of every record."""

    backend: str
    device: str


@dataclass(frozen=True)
class Suite:
    """What a backend declares for one target: its cases in order, and untimed steps around them
    (e.g. print the values being compared, load data; save a checkpoint). `before` and `after` get the
    run to log and record on; they never time anything themselves.

    `context` is a framework mode the whole suite runs in (before, every case's prepare, timed calls and
    judge, after), entered once and left however the suite ends: e.g. `jax.enable_x64` for float64, or
    `torch.inference_mode`. Entering it per call would add its cost (about 1 µs for `jax.enable_x64`)
    to every timed call; entering it in `before` and leaving it in `after` would leak it into the rest of
    the process when a check fails (then `after` does not run)."""

    target: Target
    cases: Sequence[Case[Any]]
    before: Callable[[Run], None] | None = None
    after: Callable[[Run], None] | None = None
    context: Callable[[], AbstractContextManager[object]] = nullcontext


def matches(case: Case[Any], patterns: Sequence[str]) -> bool:
    """`-k` selection: a pattern selects a case when it is a substring of the case's name or label,
    or a shell glob (`*`, `?`, `[...]`) matching it; no pattern selects every case."""
    if not patterns:
        return True
    names = (case.name, case.label)
    return any(p in n or fnmatch.fnmatchcase(n, p) for p in patterns for n in names)


def select(cases: Iterable[Case[Any]], patterns: Sequence[str]) -> list[Case[Any]]:
    return [case for case in cases if matches(case, patterns)]


def measure_keeping_result(fn: Callable[[], R], sync: Sync, repeats: int, fixed_count: bool = False
                           ) -> tuple[R, Measurement]:
    """`measure(fn)` that also hands back the last result, so no step is computed twice.

    The previous result is dropped before the next call starts, so at most one result is alive at a
    time (the xla memory estimate counts on it).
    """
    last: list[R] = []

    def call() -> R:
        last.clear()
        result = fn()
        last.append(result)
        return result

    if fixed_count:  # see `Timed.fixed_count`
        measurement = measure(call, sync, repeats=repeats, min_time_s=0.0, block_s=0.0)
    else:
        measurement = measure(call, sync, repeats=repeats)
    return last[0], measurement


def time_case(timed: Timed[R], repeats: int) -> tuple[R, Measurement]:
    if timed.once:
        result, seconds = time_call(timed.call, timed.sync)
        return result, single(seconds)
    if timed.runs is not None:
        return time_runs(timed.call, timed.sync, timed.runs, timed.before_each)
    return measure_keeping_result(timed.call, timed.sync, repeats, timed.fixed_count)


def measure_case(timed: Timed[R], repeats: int, probe: Probe | None) -> tuple[R, Measurement]:
    """`time_case`, then the memory figures on the measurement (none without a probe). Returns the last
    result: the memory pass's, where there is one (the same call on the same inputs as the timed ones)."""
    if probe is None:
        return time_case(timed, repeats)
    if timed.single_pass:
        probe.start(settle=False)
        result, measurement = time_case(timed, repeats)
        figures = probe.stop(AROUND_TIMED_RUN)
    else:
        probe.before_timing()
        result, measurement = time_case(timed, repeats)
        del result  # no more results alive during the pass than during a timed call
        probe.start(settle=True)
        result = timed.call()
        timed.sync(result)
        figures = probe.stop(SEPARATE_PASS)
    if timed.program is not None:
        figures.update(compiled_figures(timed.program))
    return result, replace(measurement, memory=figures)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "(no message)"


def run_cases(
    run: Run, target: Target, cases: Sequence[Case[Any]], *, repeats: int, patterns: Sequence[str] = (),
    progress: Progress | None = None, memory: bool = True,
) -> dict[str, Measurement]:
    """Time, judge and record every selected case in order; raise `CheckFailed` at the end if any check
    failed. Returns the measurements by case label (for a backend that reports across cases).
    `memory=False` (`--no-memory`) takes no memory figures and makes no extra call."""
    progress = progress or run.progress
    chosen = select(cases, patterns)
    for case in cases:
        if case not in chosen:
            run.log(f"skipped: {target.backend} {escape(case.label)}: not selected by -k {' '.join(patterns)}")
    measured: dict[str, Measurement] = {}
    dead: dict[str | None, str] = {}  # variant -> why it cannot run on this device
    failures: list[str] = []
    progress.start(f"{target.backend} @{target.device}", len(chosen))
    try:
        for case in chosen:
            label = f"{target.backend} {case.label} @{target.device}"
            if case.variant in dead:
                run.log(f"skipped: {escape(label)}: {escape(dead[case.variant])}")
                progress.advance(case.label)
                continue
            try:
                probe = Probe.of(target.backend, target.device) if memory else None
                result, measurement = measure_case(case.prepare(), repeats, probe)
            except case.cannot_run as exc:
                dead[case.variant] = f"{type(exc).__name__}: {first_line(exc)}"
                run.log(f"skipped: {escape(label)}: {escape(dead[case.variant])}")
                progress.advance(case.label)
                continue
            measured[case.label] = measurement
            judgement = case.judge(result, measurement)
            del result  # the next case's inputs may need the memory
            record = record_case(run, target, case, measurement, judgement, measured)
            if judgement.output is not None:
                run.outputs.append(Output(record, judgement.output))
            for note in judgement.notes:
                run.log(note)
            failures += [f"{label}: {failure}" for failure in judgement.failures]
            progress.advance(case.label)
    finally:
        progress.stop()
    if failures:
        raise CheckFailed("; ".join(failures))
    return measured


def run_suite(run: Run, suite: Suite, *, repeats: int, patterns: Sequence[str] = (),
              memory: bool = True) -> dict[str, Measurement]:
    """`before`, the selected cases (see `run_cases`), then `after` unless a check failed or nothing was
    selected; all of it inside the suite's `context`."""
    with suite.context():
        if suite.before is not None:
            suite.before(run)
        measured = run_cases(run, suite.target, suite.cases, repeats=repeats, patterns=patterns, memory=memory)
        if suite.after is not None and measured:
            suite.after(run)
        return measured


def record_case(run: Run, target: Target, case: Case[Any], measurement: Measurement, judgement: Judgement,
                measured: Mapping[str, Measurement]) -> Record:
    metrics = dict(judgement.metrics)
    if case.speedup_over is not None:
        base = measured.get(f"{case.name} [{case.speedup_over}]")
        if base is not None and case.variant != case.speedup_over:
            metrics["speedup"] = base.median_s / measurement.median_s
    return run.record(
        backend=target.backend, case=case.name, variant=case.variant, device=target.device,
        measurement=measurement, dtype=case.dtype, params={**case.params, **judgement.params},
        compile_s=measurement.compile_s if case.compiled else None,
        metrics=metrics, checks=dict(judgement.checks), memory=dict(measurement.memory),
    )
