"""The project's one measurement core. Every timed figure goes through here.

The rules (docs/timing.md explains them for a reader of the figures):
* the first call is timed on its own: for JAX and torch.compile it includes
  tracing and compilation, so it is reported apart from the steady state;
* warm-up calls follow and are not counted;
* every call's result is synchronized before the clock is read
  (`jax.block_until_ready`, `torch.cuda.synchronize`): JAX dispatches work
  asynchronously, and reading the clock without waiting reported a 2000×2000
  float64 matmul at 0.015 s on 2 cores, about 13× faster than the hardware
  can compute it;
* samples are repeated until both a minimum count and a minimum total time are
  reached (auto-calibrated like torch.utils.benchmark's blocked_autorange:
  very short calls are grouped so each sample lasts at least `block_s`, the block sized again once
  where the warm-up call it was sized from was slow: `RECALIBRATE_AFTER`);
* we report median, IQR, min and count, and flag IQR/median > 10 % as noisy;
* where an energy window is given (`jax_benchmarks.measure.energy`: NVML's counter on a GPU), it is read just
  before the first sample and just after the last, outside the first call and the warm-up.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from jax_benchmarks.measure.turns import Turns, turn

if TYPE_CHECKING:
    from jax_benchmarks.measure.energy import EnergyWindow

T = TypeVar("T")
Sync = Callable[[Any], object]

NOISY_IQR_RATIO = 0.10
# Seconds of samples a figure takes at least (`--min-time`). On a shared host the CPU slows for tenths of a
# second at a time (another tenant on a sibling hyperthread; /proc/stat shows nothing): a window this short can
# fall entirely in such a spell, and its fastest sample with it (docs/timing.md#a-steadier-window).
MIN_TIME_S = 0.2
# Samples a figure takes at most, whatever `min_time_s` asks: a call of microseconds reaches this long before
# a window of seconds (1000 samples of 2 ms blocks: 2 s). Where it cuts the window short, the measurement says
# so (`Measurement.sample_cap`) and the record keeps the window it got.
MAX_SAMPLES = 1000
# The block size (calls a sample) is calibrated from the last warm-up call. One slow call (a page fault, a cold
# cache, another tenant's spell) makes it too small: a 20 µs call timed once at 3 ms gets one call a sample, and
# 1000 such samples (0.02 s) reach `MAX_SAMPLES` long before `min_time_s`. So after this many samples the block is
# calibrated again, once, from their median, where it is under half of `block_s`; those samples were blocks of
# another size and are dropped (they count as warm-up).
RECALIBRATE_AFTER = 5


def no_sync(_: object) -> None:
    """Sync for synchronous libraries (NumPy, PyTorch on CPU); each framework's own is on its descriptor
    (jax_benchmarks.frameworks.descriptors)."""


@dataclass(frozen=True)
class Measurement:
    """Per-call times of one timed workload, in seconds."""

    samples_s: tuple[float, ...]
    first_call_s: float | None = None
    warmup: int = 0
    calls_per_sample: int = 1
    # The case's memory figures (jax_benchmarks.measure.memory), taken apart from the timed calls; the
    # record's `memory`. Empty where the harness took none.
    memory: Mapping[str, float | int | str | bool | None] = field(default_factory=dict, compare=False)
    # What other processes took of the machine while it was timed (jax_benchmarks.measure.contention);
    # the record's `contention`. Empty where the harness did not sample it.
    contention: Mapping[str, float | int | str | bool | None] = field(default_factory=dict, compare=False)
    # Where the sample count's cap (`MAX_SAMPLES`) ended sampling before `min_time_s`: the cap, and the seconds
    # of samples taken (`window_s`), shorter than asked. None where the window asked for was reached.
    sample_cap: int | None = None
    window_s: float | None = None
    # The energy of the timed calls (jax_benchmarks.measure.energy): joules per call, or why not measured; empty
    # where none was asked (a CPU figure).
    energy: Mapping[str, float | int | str | bool | None] = field(default_factory=dict, compare=False)
    # What --profile's untimed pass wrote (jax_benchmarks.measure.profile): the trace's file, its breakdown, the
    # compiled program's hash; the record's `profile`. Empty where no profile was asked.
    profile: Mapping[str, float | int | str | bool | None] = field(default_factory=dict, compare=False)

    @property
    def repeats(self) -> int:
        return len(self.samples_s)

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    @property
    def min_s(self) -> float:
        return min(self.samples_s)

    @property
    def iqr_s(self) -> float:
        if len(self.samples_s) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples_s, n=4, method="inclusive")
        return q3 - q1

    @property
    def compile_s(self) -> float | None:
        """One-off cost of the first call (trace + compile) above a steady call."""
        if self.first_call_s is None:
            return None
        return max(self.first_call_s - self.median_s, 0.0)

    @property
    def noisy(self) -> bool:
        """IQR above 10 % of the median: the figure should be read with care."""
        return self.median_s > 0 and self.iqr_s / self.median_s > NOISY_IQR_RATIO


@contextmanager
def _gc_paused() -> Iterator[None]:
    # A collection in the middle of a sample is noise we did not ask to measure.
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def time_call(fn: Callable[[], T], sync: Sync = no_sync) -> tuple[T, float]:
    """Run `fn` once, wait for its result, return (result, seconds)."""
    start = time.perf_counter()
    result = fn()
    sync(result)
    return result, time.perf_counter() - start


def measure(
    fn: Callable[[], object],
    sync: Sync = no_sync,
    *,
    repeats: int = 5,
    warmup: int = 1,
    min_time_s: float = MIN_TIME_S,
    block_s: float = 2e-3,
    max_repeats: int | None = None,
    window: EnergyWindow | None = None,
    turns: Turns | None = None,
) -> Measurement:
    """Time `fn()` honestly; see the module docstring for the protocol.

    `repeats` is the minimum number of samples; more are taken until
    `min_time_s` of samples is collected, never past `max_repeats` (default
    `MAX_SAMPLES`): a window cut short by it is said on the measurement.
    `window`, where given, is open around the samples alone.
    `turns`, where given (a round taken in turns: jax_benchmarks.measure.turns), splits the samples into
    `turns.windows` turns, each with its share of `repeats` and of `min_time_s`, the first call and the warm-up in the
    first; without it the samples are one window, as they always were.
    """
    cap = MAX_SAMPLES if max_repeats is None else max_repeats
    if repeats < 1 or warmup < 0:
        raise ValueError("repeats must be >= 1 and warmup >= 0")
    windows = 1 if turns is None else turns.windows
    window_repeats, window_time_s = math.ceil(repeats / windows), min_time_s / windows
    first, last, number = 0.0, 0.0, 1
    samples: list[float] = []
    total = 0.0
    recalibrated = capped_early = False
    with _gc_paused():
        for index in range(windows):
            with turn(turns):
                if index == 0:
                    _, first = time_call(fn, sync)
                    last = first
                    for _ in range(warmup):
                        _, last = time_call(fn, sync)
                    # Group calls shorter than block_s so the clock's resolution is negligible.
                    number = 1 if last >= block_s else min(10_000, math.ceil(block_s / max(last, 1e-9)))
                in_window, window_total = 0, 0.0
                if window is not None:
                    window.open()
                while True:
                    start = time.perf_counter()
                    for _ in range(number):
                        sync(fn())
                    elapsed = time.perf_counter() - start
                    samples.append(elapsed / number)
                    total += elapsed
                    in_window += 1
                    window_total += elapsed
                    if len(samples) >= cap:
                        capped_early = True
                        break
                    if in_window >= window_repeats and window_total >= window_time_s:
                        break
                    # Only within the first window: samples of windows already closed are not dropped.
                    if not recalibrated and len(samples) == RECALIBRATE_AFTER == in_window:
                        recalibrated = True
                        per_call = statistics.median(samples)
                        if per_call * number < block_s / 2:
                            warmup += len(samples) * number
                            number = min(10_000, math.ceil(block_s / max(per_call, 1e-9)))
                            samples, total, in_window, window_total = [], 0.0, 0, 0.0
                            if window is not None:
                                window.open()  # the energy of the dropped samples is left out with them
                if window is not None:
                    window.close(in_window * number)
            if capped_early:
                break
    capped = total < min_time_s
    return Measurement(tuple(samples), first_call_s=first, warmup=warmup, calls_per_sample=number,
                       sample_cap=cap if capped else None, window_s=total if capped else None)


def time_runs(fn: Callable[[], T], sync: Sync, runs: int,
              before_each: Callable[[], object] | None = None,
              window: EnergyWindow | None = None, turns: Turns | None = None) -> tuple[T, Measurement]:
    """Work that changes from run to run (training epoch 1, 2, ...), done exactly `runs` times.

    Each run is timed by `time_call`, with no warm-up and no calibration; `before_each()` runs untimed
    before each (e.g. moving the next epoch's batches to the device). The first run is reported apart,
    as it includes tracing and compilation, and the others are the samples; one run is a single
    sample. Returns the last run's result. `window`, where given, is open around each run that is a sample (the
    one run where there is one), never around `before_each`. `turns` (a round taken in turns): each run in a turn of
    its own, `before_each` outside them.
    """
    if runs < 1:
        raise ValueError("runs must be >= 1")
    if before_each is not None:
        before_each()
    with turn(turns):
        if window is not None and runs == 1:
            window.open()
        result, first = time_call(fn, sync)
        if window is not None and runs == 1:
            window.close(1)
    samples: list[float] = []
    for _ in range(runs - 1):
        if before_each is not None:
            before_each()
        del result  # the previous run's result may hold memory the next run needs
        with turn(turns):
            if window is not None:
                window.open()
            result, elapsed = time_call(fn, sync)
            if window is not None:
                window.close(1)
        samples.append(elapsed)
    if not samples:
        return result, single(first)
    return result, Measurement(tuple(samples), first_call_s=first)


def single(seconds: float) -> Measurement:
    """A figure that can only be taken once (an epoch, a whole solve), timed by `time_call`."""
    return Measurement((seconds,), first_call_s=None, warmup=0, calls_per_sample=1)
