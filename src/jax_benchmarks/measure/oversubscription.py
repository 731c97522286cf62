"""Threads that do not fit the machine: more threads than the cores other processes left.

On a busy machine a framework that starts one thread per core has threads waiting for cores that other
processes hold; a BLAS or PyTorch kernel then waits for its slowest thread, and a 300×300 matmul ran
12–20× slower with the default threads than with `--threads 1` beside two CPU-bound processes (issue 35),
which made a comparison of frameworks a comparison of their thread pools. Two signs tell it:

* from contention (`from_contention`): the threads a figure ran with exceed the cores others left
  while it ran (`contention.fitting_threads`);
* from rates (`from_times`): the same case with more threads took FAR_SLOWER times as long as, or
  longer than, with fewer threads (more threads never make a case that much slower where they have
  cores of their own; a case too small to gain from threads costs them a thread start, tens of percent).

Either gives one line with the `--threads` value that fits. `choose_threads` is what `verdict` does
with a reading taken before it measures: every framework runs with the same threads, as always; on a
busy machine with the count that fits where none was asked, and figures still taken on a busy machine
are not judged (report/compare.py), which the line says. Judges take readings as data: tests inject them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jax_benchmarks.measure.contention import Contention, Sampler, contention_between, fitting_threads, of_fields
from jax_benchmarks.store.record import Record, Scalar

# With more threads the case took at least this many times as long as with fewer: oversubscribed.
FAR_SLOWER = 2.0
# The thread counts a record's env holds (src/jax_benchmarks/hardware/threads.py: thread_state); the
# `threads` setting (--threads) wins where it was given.
THREAD_KEYS = ("blas_threads", "torch_threads", "xla_threads", "openmp_threads")
# How long `verdict` watches the machine before it measures: /proc/stat's ticks need 0.16 s on 2 CPUs
# (contention.MIN_RESOLUTION_FACTOR); a second averages over a scheduler's bursts.
PROBE_S = 1.0
# Less than this much of a core left by other processes: no thread count fits (`fitting_threads` rounds
# what is left, so below half a core even one thread is mostly waiting).
NOTHING_FITS_CORES = 0.5


@dataclass(frozen=True)
class Oversubscribed:
    threads: int  # what the figure ran with
    fits: int  # the --threads value that fits
    why: str

    def line(self) -> str:
        return f"oversubscribed: {self.threads} threads {self.why}; --threads {self.fits} fits"


def threads_of(env: Mapping[str, Scalar]) -> int | None:
    """The threads a record's figure ran with: the --threads setting, else the largest pool the frameworks
    reported; None where the record says neither (never a guess)."""
    asked = env.get("threads")
    if type(asked) is int:
        return asked
    counts = [value for key in THREAD_KEYS if type(value := env.get(key)) is int]
    return max(counts) if counts else None


def from_contention(threads: int, seen: Contention) -> Oversubscribed | None:
    """Oversubscribed where `threads` exceed what other processes left while the figure ran."""
    fits = fitting_threads(seen)
    if fits is None or seen.cores is None or seen.taken_cores is None or threads <= fits:
        return None
    left = max(seen.cores - seen.taken_cores, 0.0)
    return Oversubscribed(threads, fits, f"where other processes left {left:.1f} of {seen.cores} cores "
                                         f"({seen.sentence()}): threads wait for cores others hold")


def from_times(seconds_by_threads: Mapping[int, float]) -> Oversubscribed | None:
    """Oversubscribed where the case with the most threads took FAR_SLOWER × or more the time of its
    fastest run at fewer threads (times of the same case on the same machine, lower is better)."""
    if len(seconds_by_threads) < 2:
        return None
    most = max(seconds_by_threads)
    fewer = {threads: s for threads, s in seconds_by_threads.items() if threads < most}
    best = min(fewer, key=lambda threads: fewer[threads])
    ratio = seconds_by_threads[most] / fewer[best]
    if ratio < FAR_SLOWER:
        return None
    return Oversubscribed(most, best, f"took {ratio:.1f}× the time of {best} thread(s): they wait for cores "
                                      "instead of sharing the work")


@dataclass(frozen=True)
class ThreadChoice:
    """What `verdict` measures with (None: each library's own) and the one line that says why."""

    threads: int | None
    line: str | None


def choose_threads(asked: int | None, seen: Contention) -> ThreadChoice:
    """The threads for every framework alike, from the machine before measuring: on a busy machine the
    count that fits where none was asked; an asked count is kept, with a warning where it does not fit."""
    if seen.unknown is not None:
        return ThreadChoice(asked, f"contention unknown before measuring ({seen.unknown}): threads as asked, "
                                   "no count fitted to the machine")
    fits = fitting_threads(seen)
    if not seen.busy or fits is None or seen.cores is None or seen.taken_cores is None:
        return ThreadChoice(asked, None)
    not_judged = "figures still taken on a busy machine are not judged"
    if seen.cores - seen.taken_cores < NOTHING_FITS_CORES:
        return ThreadChoice(asked or 1, f"the machine is busy ({seen.sentence()}): no thread count fits, less than "
                                        f"{NOTHING_FITS_CORES} of a core is left; measuring with --threads {asked or 1} and {not_judged} "
                                        "(the page says which)")
    if asked is None:
        return ThreadChoice(fits, f"the machine is busy ({seen.sentence()}): every framework measures with "
                                  f"--threads {fits}, which fits what they left; {not_judged}")
    if asked > fits:
        return ThreadChoice(asked, f"warning: --threads {asked} oversubscribes the machine ({seen.sentence()}); "
                                   f"--threads {fits} fits; measuring as asked, and {not_judged}")
    return ThreadChoice(asked, f"the machine is busy ({seen.sentence()}): --threads {asked} fits; {not_judged}")


def probe(seconds: float = PROBE_S) -> Contention:
    """What other processes take of this process's CPUs over `seconds` of this process sleeping."""
    sampler = Sampler.of_this_machine()
    before = sampler.read()
    time.sleep(seconds)
    return contention_between(before, sampler.read())


# ------------------------------------------------- lines under a table ---

def contention_threads_line(records: Sequence[Record]) -> str | None:
    """One line where figures ran with more threads than others left them (`from_contention`): how many,
    and the worst, with the --threads that fits; None where none did or it cannot be told."""
    pairs = [(threads, seen) for record in records if record.median_s
             and (seen := of_fields(record.contention)) is not None and (threads := threads_of(record.env)) is not None]
    found = [over for threads, seen in pairs if (over := from_contention(threads, seen)) is not None]
    if not found:
        return None
    worst = min(found, key=lambda over: (over.fits, -over.threads))
    return f"{worst.line()} ({len(found)} of {len(pairs)} figures)"


def figure_of(record: Record) -> tuple[str, str, str, str | None, str]:
    return record.group, record.case, record.backend, record.variant, record.device


def times_threads_line(current: Sequence[Record], baseline: Sequence[Record]) -> str | None:
    """One line where a figure measured with more threads in one of two runs took FAR_SLOWER × or more the
    time it took with fewer in the other (`from_times`, the fastest round median of each run): how many,
    and the worst; None where the runs ran the same threads or none was that much slower."""
    found: list[tuple[float, str, Oversubscribed]] = []
    base: dict[tuple[str, str, str, str | None, str], list[Record]] = {}
    for record in baseline:
        base.setdefault(figure_of(record), []).append(record)
    now: dict[tuple[str, str, str, str | None, str], list[Record]] = {}
    for record in current:
        now.setdefault(figure_of(record), []).append(record)
    for key, records in now.items():
        times: dict[int, float] = {}
        for side in (records, base.get(key, [])):
            timed = [r.median_s for r in side if r.median_s]
            threads = threads_of(side[-1].env) if side else None
            if timed and threads is not None:
                times[threads] = min(timed)
        over = from_times(times) if len(times) == 2 else None
        if over is not None:
            found.append((times[over.threads] / times[over.fits], f"{key[0]} {key[1]} {key[2]}", over))
    if not found:
        return None
    _, figure, worst = max(found, key=lambda item: item[0])
    return f"{worst.line()}: {figure} ({len(found)} figure(s) of the two runs)"
