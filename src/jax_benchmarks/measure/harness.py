"""The one harness shape every group uses: a backend declares its cases, the core runs them.

Learned from JAX's `benchmarks/` and asv: the harness owns the loop and the statistics, a case is a
small function. A backend builds a list of `Case`s for one `Target` (its column and device) and hands
it to `run_cases`, which for each case, in order:

1. skips it when `--case/-k` does not select it, or when an earlier case of the same variant found
   that the variant cannot run here (the reason is logged, the figure is never faked);
2. builds the fixtures it uses that do not exist yet (see below), then calls `prepare(*their values)`:
   builds the rest of the inputs, untimed, and returns the `Timed` call;
3. times it through `jax_benchmarks.measure.timing` (first call apart as compile time, warm-up, sync, repeats),
   or once for work that can only be done once (a whole solve), or a fixed number of runs for work
   that changes from run to run (training epochs);
4. takes its memory figures (`jax_benchmarks.measure.memory`) without touching the timed calls: in a
   separate, untimed call of the same `Timed` after the samples (as asv's `peakmem_`), the last timed
   result dropped first; or, for work done once or a fixed number of times, around that timed work
   (the peak is reset before the first call and read after the last, outside every timed region;
   such work always starts from a heap handed back, memory figures or not: see `measure_case`);
   and the compiled program's memory where the `Timed` says how to obtain it;
5. `judge`s the last result (of the memory pass where there is one): checks, metrics and failures;
6. writes the record, keeps the judgement's `output` next to it on `run.outputs` (for a later step of the
   run, e.g. a cross-backend comparison), logs the case's notes, and reports progress;

and, once every selected case is recorded, raises `CheckFailed` naming every broken check. Nothing
measured is lost to a failed check.

Fixtures: state that cases share
--------------------------------
What several cases need (the matrices a workload multiplies, a model and its data) is a `Fixture`,
declared on the `Suite` (`Suite.fixtures`), never a mutable object the cases' closures write into:

    pair = Fixture("A, B", setup=ops.uniform_pair)                            # built by setup()
    product = Fixture("C = A·B", lambda ab: ops.matmul(*ab), needs=(pair,))   # setup(pair's value)
    Suite(target, [
        Case("uniform_...", lambda: Timed(ops.uniform_pair), provides=pair),
        Case("mean_...", lambda ab: Timed(lambda: ops.means(*ab)), judge_mean, uses=(pair,)),
        Case("inverse_...", lambda c: Timed(lambda: ops.inverse(c)), uses=(product,)),
    ], fixtures=[pair, product])

* A case names the fixtures it `uses`; their values are passed, in that order, after the usual
  arguments: `prepare(*values)` and `judge(result, measurement, *values)`.
* A fixture is built lazily, untimed, when the first case that uses it is prepared (its `needs` first,
  their values passed to `setup`), so `-k` may select any case alone and its inputs still exist.
* A case that `provides` a fixture hands over its last timed result as the fixture's value, so a step
  that was timed is not computed a second time (a value built earlier is torn down first). This is the
  one place where case order matters, and the case says so.
* Lifetime: a fixture is torn down (`teardown(value)`, then dropped) as soon as no case still to run
  (selected, its variant not found unable to run) uses it, directly or through the `needs` of a fixture
  not built yet, and `Suite.after` does not use it (`Suite.after_uses`, passed as `after(run, *values)`).
  Whatever is still alive is torn down, newest first, when the suite ends, however it ends (a failed
  check, an exception, Ctrl-C), inside the suite's `context`; every teardown runs even if one raises
  (the first error is raised, unless the suite already ended by an exception: that one is reported). So
  memory held by a fixture is given back once it is no longer needed: the xla workload never holds more
  matrices than its memory estimate counts.
* Every fixture a case, a fixture or `after` refers to must be declared on the suite (`ValueError`
  otherwise), so a suite's shared state can be read off its declaration. One fixture is the harness's own and
  is never declared: `RECORDS`, a read-only view of the records this suite wrote so far (a figure a later case
  needs from an earlier one: a peak, a median), their judgements' outputs and the run's log; whoever
  follows the records as they are written (an experiment tracker) subscribes to it.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from dataclasses import dataclass, field, replace
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

from rich.markup import escape

from jax_benchmarks.errors import CheckFailed, first_line, literal
from jax_benchmarks.measure.contention import Sampler, contention_between
from jax_benchmarks.measure.energy import EnergyMeter, EnergyWindow, energy_metrics
from jax_benchmarks.measure.memory import (AROUND_TIMED_RUN, SEPARATE_PASS, DeviceMemory, Probe, compiled_figures,
                                           release_freed_memory)
from jax_benchmarks.measure.profile import ProfilePass
from jax_benchmarks.measure.progress import Progress
from jax_benchmarks.measure.turns import Turns, turn
from jax_benchmarks.store.record import Output, Record, Scalar
from jax_benchmarks.measure.timing import (MIN_TIME_S, Measurement, Sync, measure, no_sync, single, time_call,
                                           time_runs)

R = TypeVar("R")
T = TypeVar("T")


class Recorder(Protocol):
    """What the harness needs of the run it records into (`jax_benchmarks.run.Run` is the one the program
    makes): its id, the records so far, where they are written, the outputs the judgements kept, the log and the
    progress sinks. Declared here so that the core imports nothing above it."""

    run_id: str
    records: list[Record]
    outputs: list[Output]
    progress: Progress

    def log(self, line: str) -> None: ...

    def record(self, *, backend: str, case: str, device: str, measurement: Measurement | None = None,
               variant: str | None = None, dtype: str | None = None, params: dict[str, Any] | None = None,
               compile_s: float | None = None, metrics: dict[str, Scalar] | None = None,
               checks: dict[str, Scalar] | None = None, memory: dict[str, Scalar] | None = None) -> Record: ...


@dataclass(frozen=True, eq=False)
class Fixture(Generic[T]):
    """State shared by a suite's cases, with a visible lifetime (see the module's docstring).

    `setup(*values of needs)` builds the value, untimed; `teardown(value)` gives back what it holds (e.g. a
    GPU's cached memory). Fixtures compare by identity: two declarations are two fixtures.
    """

    name: str
    setup: Callable[..., T]
    needs: tuple[Fixture[Any], ...] = ()
    teardown: Callable[[T], object] | None = None

    def __repr__(self) -> str:
        return f"Fixture({self.name!r})"


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
    # The result makes every later case of the suite meaningless (e.g. a training whose loss diverged): it is
    # recorded with its failed checks, then its failures end the suite at once (no later case, no `after`).
    ends_suite: bool = False


Subscriber = Callable[[Record, object], object]


class SuiteRecords:
    """What a suite's cases and fixtures may read of the run while the suite runs: the records this suite wrote
    so far and the outputs their judgements kept (read-only), and the run's log. A subscriber is called with each
    new record of the suite and its judgement's output (None when it kept none), once it is written."""

    def __init__(self, run: Recorder) -> None:
        self._run = run
        self._first = len(run.records)
        self._subscribers: list[Subscriber] = []

    def log(self, line: str) -> None:
        self._run.log(line)

    def _written(self) -> list[Record]:
        return self._run.records[self._first:]

    def last(self, case: str, variant: str | None, **params: Scalar) -> Record | None:
        """The newest record of `case [variant]` whose params include `params`; None when there is none."""
        for record in reversed(self._written()):
            if (record.case, record.variant) == (case, variant) and all(
                    record.params.get(k) == v for k, v in params.items()):
                return record
        return None

    def count(self, case: str, variant: str | None) -> int:
        return sum((record.case, record.variant) == (case, variant) for record in self._written())

    def output(self, case: str, variant: str | None) -> object:
        """The output kept with the newest record of `case [variant]` (None when there is none)."""
        mine = {id(record) for record in self._written()}
        for kept in reversed(self._run.outputs):
            if id(kept.record) in mine and (kept.record.case, kept.record.variant) == (case, variant):
                return kept.value
        return None

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.remove(subscriber)

    def written(self, record: Record, output: object) -> None:
        for subscriber in list(self._subscribers):
            subscriber(record, output)


def _built_by_the_harness() -> SuiteRecords:
    raise RuntimeError("RECORDS is the harness's own fixture: run_suite builds it")


# The harness's own fixture: a case or fixture that uses (needs) it receives this suite's `SuiteRecords`.
RECORDS: Fixture[SuiteRecords] = Fixture("this suite's records", _built_by_the_harness)


def no_judgement(_result: object, _measurement: Measurement, *_fixtures: object) -> Judgement:
    return Judgement()


@dataclass(frozen=True)
class Case(Generic[R]):
    """One named figure: `name` follows `{op}_{shape}_{dtype}` (e.g. matmul_1000x1000_float64).

    `prepare(*fixture values)` builds the inputs and returns the `Timed` call; `judge(result, measurement,
    *fixture values)` checks the last result. The values are those of `uses`, in order (none by default).
    """

    name: str
    prepare: Callable[..., Timed[R]]
    judge: Callable[..., Judgement] = no_judgement
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
    # The suite's fixtures this case's prepare and judge receive, in this order.
    uses: tuple[Fixture[Any], ...] = ()
    # The fixture whose value becomes this case's last timed result.
    provides: Fixture[Any] | None = None

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
    the process when a check fails (then `after` does not run).

    `fixtures` declares the state the cases share (see the module's docstring); `after` receives the
    values of `after_uses` after the run: `after(run, *values)`."""

    target: Target
    cases: Sequence[Case[Any]]
    before: Callable[[Recorder], None] | None = None
    after: Callable[..., None] | None = None
    context: Callable[[], AbstractContextManager[object]] = nullcontext
    fixtures: Sequence[Fixture[Any]] = ()
    after_uses: tuple[Fixture[Any], ...] = ()


class BackendModule(Protocol):
    """What a `<framework>_backend.py` module provides: its suites (one per target device) for the
    settings, in order. Building a suite builds no data: `--list` prints the case names from it, and
    `run_suite` prepares, times, checks and records each case."""

    def suites(self, settings: Any) -> Sequence[Suite]: ...


class LiveFixtures:
    """The values of a suite's fixtures while it runs: built on first use, torn down when no longer needed
    and, newest first, when the suite ends. A context manager: leaving it tears everything down."""

    def __init__(self, declared: Sequence[Fixture[Any]], records: SuiteRecords | None = None) -> None:
        names = [fixture.name for fixture in declared]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise ValueError(f"fixtures declared twice on one suite: {', '.join(twice)}")
        self.declared = tuple(declared)
        self._values: dict[Fixture[Any], Any] = {}  # insertion order = build order
        self.records = records
        if records is not None:
            self.declared += (RECORDS,)
            self._values[RECORDS] = records  # lives as long as the suite
        for fixture in self.declared:
            self.check_declared(fixture.needs, f"fixture {fixture.name}")

    def check_declared(self, fixtures: Iterable[Fixture[Any] | None], user: str) -> None:
        for fixture in fixtures:
            if fixture is not None and fixture not in self.declared:
                raise ValueError(f"{user} refers to fixture {fixture.name}, which its suite does not declare")

    def alive(self) -> list[Fixture[Any]]:
        return list(self._values)

    def value(self, fixture: Fixture[T]) -> T:
        """The fixture's value, built now (its `needs` first) if nothing built or provided it yet."""
        if fixture not in self._values:
            needs = [self.value(need) for need in fixture.needs]
            self._values[fixture] = fixture.setup(*needs)
        built: T = self._values[fixture]
        return built

    def provide(self, fixture: Fixture[T], value: T) -> None:
        """`value` becomes the fixture's value; one it had is torn down first."""
        self.tear_down(fixture)
        self._values[fixture] = value

    def tear_down(self, fixture: Fixture[Any]) -> None:
        if fixture in self._values:
            value = self._values.pop(fixture)
            if fixture.teardown is not None:
                fixture.teardown(value)

    def keep_only(self, needed: Iterable[Fixture[Any]]) -> None:
        """Tear down, newest first, every live fixture that is not needed."""
        keep = set(needed) | {RECORDS}
        for fixture in reversed(self.alive()):
            if fixture not in keep:
                self.tear_down(fixture)

    def unbuilt(self, uses: Iterable[Fixture[Any]]) -> list[Fixture[Any]]:
        """The fixtures that must be built for these uses, each after what it needs."""
        order: list[Fixture[Any]] = []

        def visit(fixture: Fixture[Any]) -> None:
            if fixture not in self._values and fixture not in order:
                for need in fixture.needs:
                    visit(need)
                order.append(fixture)

        for fixture in uses:
            visit(fixture)
        return order

    def needed_by(self, uses: Iterable[Fixture[Any]]) -> set[Fixture[Any]]:
        """The fixtures these uses need: themselves and, for each not built yet, what building it needs."""
        needed: set[Fixture[Any]] = set()
        pending = list(uses)
        while pending:
            fixture = pending.pop()
            if fixture not in needed:
                needed.add(fixture)
                if fixture not in self._values:
                    pending += fixture.needs
        return needed

    def close(self) -> None:
        """Tear down everything still alive, newest first; every teardown runs even if one raises."""
        errors: list[BaseException] = []
        for fixture in reversed(self.alive()):
            try:
                self.tear_down(fixture)
            except BaseException as exc:  # the first is raised once every fixture was torn down
                self._values.pop(fixture, None)
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> LiveFixtures:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.close()
            return
        with suppress(Exception):  # the exception that ended the suite is the one to report
            self.close()


def matches(case: Case[Any], patterns: Sequence[str]) -> bool:
    """`-k` selection: a pattern selects a case when it is a substring of the case's name or label,
    or a shell glob (`*`, `?`, `[...]`) matching it; no pattern selects every case."""
    if not patterns:
        return True
    names = (case.name, case.label)
    return any(p in n or fnmatch.fnmatchcase(n, p) for p in patterns for n in names)


def select(cases: Iterable[Case[Any]], patterns: Sequence[str]) -> list[Case[Any]]:
    return [case for case in cases if matches(case, patterns)]


def measure_keeping_result(fn: Callable[[], R], sync: Sync, repeats: int, fixed_count: bool = False,
                           min_time_s: float = MIN_TIME_S, window: EnergyWindow | None = None,
                           turns: Turns | None = None) -> tuple[R, Measurement]:
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
        measurement = measure(call, sync, repeats=repeats, min_time_s=0.0, block_s=0.0, window=window, turns=turns)
    else:
        measurement = measure(call, sync, repeats=repeats, min_time_s=min_time_s, window=window, turns=turns)
    return last[0], measurement


def time_case(timed: Timed[R], repeats: int, min_time_s: float = MIN_TIME_S, window: EnergyWindow | None = None,
              turns: Turns | None = None) -> tuple[R, Measurement]:
    """Time the case's call as its `Timed` says; `window` (energy) open around the timed samples alone; `turns` (a
    round taken in turns, jax_benchmarks.measure.turns): every timed call in this process's turns."""
    if timed.once:
        with turn(turns):
            if window is not None:
                window.open()
            result, seconds = time_call(timed.call, timed.sync)
            if window is not None:
                window.close(1)
        return result, single(seconds)
    if timed.runs is not None:
        return time_runs(timed.call, timed.sync, timed.runs, timed.before_each, window, turns)
    return measure_keeping_result(timed.call, timed.sync, repeats, timed.fixed_count, min_time_s, window, turns)


def sampled_case(timed: Timed[R], repeats: int, sampler: Sampler, min_time_s: float = MIN_TIME_S,
                 energy: EnergyMeter | None = None, turns: Turns | None = None) -> tuple[R, Measurement]:
    """`time_case`, with what other processes took of the machine meanwhile on the measurement
    (jax_benchmarks.measure.contention: a reading of /proc before and after, outside the timed calls;
    benchmarks/contention.py measures their cost), and the energy of the timed calls where `energy` reads a
    counter (jax_benchmarks.measure.energy; its reason where it cannot). In a round taken in turns, `sampler` counts
    the round's other processes as this one (`Turns.sampler`)."""
    before = sampler.read()
    window = None if energy is None else energy.window()
    result, measurement = time_case(timed, repeats, min_time_s, window, turns)
    seen = contention_between(before, sampler.read())
    if sampler.gpu is not None:  # after the CPU's reading: nvidia-smi's tens of ms are not in its window
        seen = replace(seen, gpu=sampler.gpu())
    spent = {} if energy is None else energy.figures(window)
    return result, replace(measurement, contention=seen.as_fields(), energy=spent)


def measure_case(timed: Timed[R], repeats: int, probe: Probe | None,
                 sampler: Sampler | None = None, min_time_s: float = MIN_TIME_S,
                 energy: EnergyMeter | None = None, profiler: ProfilePass | None = None,
                 where: tuple[str, str, str] = ("", "", ""),
                 generated: Callable[[], object] | None = None, turns: Turns | None = None) -> tuple[R, Measurement]:
    """`time_case`, then the memory figures on the measurement (none without a probe), then --profile's untimed
    pass (`profiler`; `where` = backend, case label, device: its files' names; `generated`: what its `watch`
    started before the case returned). Returns the last result: the memory pass's, where there is one (the same
    call on the same inputs as the timed ones). `turns`: a round taken in turns (`time_case`)."""
    result, measurement = measured_with_memory(timed, repeats, probe, sampler, min_time_s, energy, turns)
    if profiler is None:
        return result, measurement
    return result, replace(measurement, profile=profiler.take(timed, *where, generated=generated))


def measured_with_memory(timed: Timed[R], repeats: int, probe: Probe | None, sampler: Sampler | None,
                         min_time_s: float, energy: EnergyMeter | None, turns: Turns | None = None
                         ) -> tuple[R, Measurement]:
    """`time_case`, then the memory figures on the measurement (none without a probe). The memory pass is untimed:
    in a round taken in turns it runs outside this process's turns (no other process's window runs meanwhile: the
    arbiter grants none while a process works between its turns)."""
    if timed.single_pass:
        # Work timed once starts from a heap handed back, with or without memory figures, so that
        # --memory does not change its timing. Otherwise its allocations reuse pages that earlier cases
        # in this process freed: its host peak reads too low (a 64 MiB allocation read as 0 B,
        # tests/memory/test_host.py), and its time depends on which cases ran before it
        # (benchmarks/selection_effect.py).
        release_freed_memory()
    sampler = sampler or Sampler.of_this_machine()
    if probe is None:
        return sampled_case(timed, repeats, sampler, min_time_s, energy, turns)
    if timed.single_pass:
        probe.start(settle=False)
        result, measurement = sampled_case(timed, repeats, sampler, min_time_s, energy, turns)
        figures = probe.stop(AROUND_TIMED_RUN)
    else:
        probe.before_timing()
        result, measurement = sampled_case(timed, repeats, sampler, min_time_s, energy, turns)
        del result  # no more results alive during the pass than during a timed call
        probe.start(settle=True)
        result = timed.call()
        timed.sync(result)
        figures = probe.stop(SEPARATE_PASS)
    if timed.program is not None:
        figures.update(compiled_figures(timed.program))
    return result, replace(measurement, memory=figures)


def run_cases(
    run: Recorder, target: Target, cases: Sequence[Case[Any]], *, repeats: int, patterns: Sequence[str] = (),
    progress: Progress | None = None, fixtures: Sequence[Fixture[Any]] = (), memory: bool = True,
    device_memory: DeviceMemory | None = None, min_time_s: float = MIN_TIME_S, energy: EnergyMeter | None = None,
    profiler: ProfilePass | None = None, turns: Turns | None = None,
) -> dict[str, Measurement]:
    """Time, judge and record every selected case in order; raise `CheckFailed` at the end if any check
    failed. Returns the measurements by case label (for a backend that reports across cases). The
    `fixtures` the cases use live until the last case that needs them (see the module's docstring).
    `memory=False` (`--no-memory`) takes no memory figures and makes no extra call; `device_memory` reads the
    device peak of a case on a GPU (the backend's spec declares it; None: the record says none is read);
    `energy` reads the energy of the timed calls (default: NVML's counter of the target's GPU; none on a CPU);
    `profiler` (--profile) profiles one more untimed call of each case (jax_benchmarks.measure.profile); `turns` (a
    round taken in turns, jax_benchmarks.measure.turns) holds every timed call in this process's turns."""
    with LiveFixtures(fixtures) as live:
        return run_live(run, target, cases, live, repeats=repeats, patterns=patterns, progress=progress,
                        memory=memory, device_memory=device_memory, min_time_s=min_time_s, energy=energy,
                        profiler=profiler, turns=turns)


def run_live(
    run: Recorder, target: Target, cases: Sequence[Case[Any]], live: LiveFixtures, *, repeats: int,
    patterns: Sequence[str] = (), progress: Progress | None = None, kept_for_after: Sequence[Fixture[Any]] = (),
    memory: bool = True, device_memory: DeviceMemory | None = None, min_time_s: float = MIN_TIME_S,
    energy: EnergyMeter | None = None, profiler: ProfilePass | None = None, turns: Turns | None = None,
) -> dict[str, Measurement]:
    """`run_cases` with the suite's live fixtures, keeping `kept_for_after` alive for `Suite.after`."""
    progress = progress or run.progress
    for case in cases:
        live.check_declared((*case.uses, case.provides), f"case {case.label}")
    chosen = select(cases, patterns)
    unselected = [case.label for case in cases if case not in chosen]
    if unselected:  # one line, the user's text shown literally: `--list -k` names the cases that run
        run.log(f"skipped: {target.backend}: {len(unselected)} of {len(cases)} case(s) not selected by "
                f"-k {literal(','.join(patterns))}")
    measured: dict[str, Measurement] = {}
    dead: dict[str | None, str] = {}  # variant -> why it cannot run on this device

    def still_needed(after_index: int, current: Case[Any] | None = None) -> set[Fixture[Any]]:
        to_come = [c for c in chosen[after_index:] if c.variant not in dead]
        uses = [f for c in to_come for f in c.uses] + list(kept_for_after) + list(current.uses if current else ())
        return live.needed_by(uses)

    failures: list[str] = []
    capped: list[tuple[str, Measurement]] = []  # figures whose window the sample cap cut short of min_time_s
    sampler = Sampler.of_this_machine(target.device)
    if turns is not None:  # the round's other processes count as this one (measure/turns.py)
        sampler = turns.sampler(sampler)
    energy = energy if energy is not None else EnergyMeter.of_device(target.device)
    progress.start(f"{target.backend} @{target.device}", len(chosen))
    try:
        for index, case in enumerate(chosen):
            label = f"{target.backend} {case.label} @{target.device}"
            if case.variant in dead:
                run.log(f"skipped: {escape(label)}: {escape(dead[case.variant])}")
                progress.advance(case.label)
                continue
            # --profile: what torch.compile generates for the case, watched from before its fixtures on.
            generated = profiler.watch(target.backend) if profiler is not None and case.compiled else None
            try:
                for fixture in live.unbuilt(case.uses):  # needs first; each dropped once nothing needs it
                    live.value(fixture)
                    live.keep_only(still_needed(index + 1, case))
                values = [live.value(fixture) for fixture in case.uses]
                probe = Probe.of(device_memory, target.backend, target.device) if memory else None
                result, measurement = measure_case(case.prepare(*values), repeats, probe, sampler, min_time_s, energy,
                                                   profiler, (target.backend, case.label, target.device), generated,
                                                   turns)
            except case.cannot_run as exc:
                if generated is not None:
                    generated()  # stops the watch: nothing of a case that could not run is recorded
                dead[case.variant] = f"{type(exc).__name__}: {first_line(exc)}"
                run.log(f"skipped: {escape(label)}: {escape(dead[case.variant])}")
                progress.advance(case.label)
                live.keep_only(still_needed(index + 1))
                continue
            measured[case.label] = measurement
            if measurement.sample_cap is not None:
                capped.append((case.label, measurement))
            if case.provides is not None:
                live.provide(case.provides, result)
            judgement = case.judge(result, measurement, *values)
            del result, values  # the next case's inputs may need the memory
            record = record_case(run, target, case, measurement, judgement, measured)
            if judgement.output is not None:
                run.outputs.append(Output(record, judgement.output))
            if live.records is not None:
                live.records.written(record, judgement.output)
            for note in judgement.notes:
                run.log(note)
            failures += [f"{label}: {failure}" for failure in judgement.failures]
            progress.advance(case.label)
            if judgement.ends_suite and judgement.failures:
                if chosen[index + 1:]:
                    run.log(f"skipped: {target.backend}: the {len(chosen) - index - 1} later case(s), after "
                            f"{escape(case.label)}'s failed check")
                break
            live.keep_only(still_needed(index + 1))
    finally:
        progress.stop()
    if capped:
        run.log(cap_line(target, capped, min_time_s))
    if failures:
        raise CheckFailed("; ".join(failures))
    return measured


def cap_line(target: Target, capped: Sequence[tuple[str, Measurement]], min_time_s: float) -> str:
    """One line for the figures whose sampling the cap ended before `min_time_s` (--min-time): what they got
    instead, which their records keep (metrics sample_cap and window_s)."""
    label, shortest = min(capped, key=lambda item: item[1].window_s or 0.0)
    return (f"{target.backend}: {len(capped)} figure(s) stopped at the cap of {shortest.sample_cap} samples before "
            f"--min-time {min_time_s:g} s (shortest window {shortest.window_s or 0.0:.3g} s, {escape(label)}); "
            "their records say so (metrics sample_cap, window_s)")


def run_suite(run: Recorder, suite: Suite, *, repeats: int, patterns: Sequence[str] = (),
              memory: bool = True, device_memory: DeviceMemory | None = None, min_time_s: float = MIN_TIME_S,
              energy: EnergyMeter | None = None, profiler: ProfilePass | None = None,
              turns: Turns | None = None) -> dict[str, Measurement]:
    """`before`, the selected cases (see `run_cases`), then `after` unless a check failed or nothing was
    selected; all of it inside the suite's `context`, the fixtures torn down before it is left."""
    with suite.context(), LiveFixtures(suite.fixtures, SuiteRecords(run)) as live:
        live.check_declared(suite.after_uses, "the suite's after")
        if suite.before is not None:
            suite.before(run)
        measured = run_live(run, suite.target, suite.cases, live, repeats=repeats, patterns=patterns,
                            kept_for_after=suite.after_uses if suite.after is not None else (), memory=memory,
                            device_memory=device_memory, min_time_s=min_time_s, energy=energy, profiler=profiler,
                            turns=turns)
        if suite.after is not None and measured:
            suite.after(run, *(live.value(fixture) for fixture in suite.after_uses))
        return measured


def record_case(run: Recorder, target: Target, case: Case[Any], measurement: Measurement, judgement: Judgement,
                measured: Mapping[str, Measurement]) -> Record:
    metrics = dict(judgement.metrics)
    if case.speedup_over is not None:
        base = measured.get(f"{case.name} [{case.speedup_over}]")
        if base is not None and case.variant != case.speedup_over:
            metrics["speedup"] = base.median_s / measurement.median_s
    metrics.update(energy_metrics(measurement.energy, metrics.get("images_per_s"), measurement.median_s))
    return run.record(
        backend=target.backend, case=case.name, variant=case.variant, device=target.device,
        measurement=measurement, dtype=case.dtype, params={**case.params, **judgement.params},
        compile_s=measurement.compile_s if case.compiled else None,
        metrics=metrics, checks=dict(judgement.checks), memory=dict(measurement.memory),
    )
