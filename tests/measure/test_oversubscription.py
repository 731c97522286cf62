"""Threads that fit the machine: known answers from injected /proc readings and injected times."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.measure.contention import Contention, contention_between
from jax_benchmarks.measure.oversubscription import (ThreadChoice, choose_threads, contention_threads_line,
                                                     from_contention, from_times, threads_of, times_threads_line)
from tests.conftest import invoke
from tests.measure.test_contention import reading, stat
from tests.report.fixtures import ENV, XLA_NEW, XLA_OLD, record, samples, write_results

TWO_TAKEN_1_6 = contention_between(reading(0.0, 5.0, stat((0, 0, 0, 0), (0, 0, 0, 0))),
                                   reading(1.0, 5.1, stat((80, 5, 15, 0), (85, 0, 15, 0))))  # others: 1.6 of 2
QUIET = Contention(1.0, 2, 0.1, 0.0)
HALF_TAKEN = Contention(1.0, 4, 1.9, 0.0)  # 2.1 of 4 cores left: 2 threads fit
ONE_LEFT = Contention(1.0, 2, 1.3, 0.0)  # 0.7 of 2 left: 1 thread fits
ALL_TAKEN = Contention(1.0, 2, 1.8, 0.1)  # 0.1 of 2 left: nothing fits
UNKNOWN = Contention(1.0, unknown="/proc/stat is hidden on this machine")


def test_threads_beyond_what_others_left_are_oversubscribed() -> None:
    assert TWO_TAKEN_1_6.taken_cores == pytest.approx(1.6)
    over = from_contention(2, TWO_TAKEN_1_6)
    assert over is not None and over.fits == 1
    assert over.line() == ("oversubscribed: 2 threads where other processes left 0.4 of 2 cores (other processes "
                           "took 1.6 of 2 cores): threads wait for cores others hold; --threads 1 fits")
    assert from_contention(1, TWO_TAKEN_1_6) is None  # one thread fits
    assert from_contention(2, QUIET) is None
    assert from_contention(4, HALF_TAKEN) is not None and from_contention(2, HALF_TAKEN) is None
    assert from_contention(8, UNKNOWN) is None  # never a guess


def test_a_rate_far_below_fewer_threads_is_oversubscribed() -> None:
    # The figures: PyTorch f_100000 took 96 ms by default (2 threads) and 442 µs with one.
    over = from_times({2: 96e-3, 1: 442e-6})
    assert over is not None and (over.threads, over.fits) == (2, 1)
    assert "took 217.2× the time of 1 thread(s)" in over.line() and over.line().endswith("--threads 1 fits")
    assert from_times({2: 1.3e-3, 1: 1.37e-3}) is None  # equal: threads fit
    assert from_times({4: 1.9e-3, 1: 1e-3}) is None  # below FAR_SLOWER: a thread start, not oversubscription
    assert from_times({4: 9e-3, 2: 1e-3, 1: 3e-3}).fits == 2  # type: ignore[union-attr]  # the fastest fewer
    assert from_times({1: 1e-3}) is None


def test_threads_of_a_record_env() -> None:
    assert threads_of({"threads": 1, "torch_threads": 2}) == 1  # --threads wins
    assert threads_of({"threads": None, "blas_threads": 2, "torch_threads": 2, "xla_threads": None}) == 2
    assert threads_of(ENV) is None


NOT_JUDGED = "figures still taken on a busy machine are not judged"
FITS = "every framework measures with --threads {n}, which fits what they left; " + NOT_JUDGED
NONE_FITS = ("no thread count fits, less than 0.5 of a core is left; measuring with --threads {n} and " + NOT_JUDGED
             + " (the page says which)")
STOLEN = "other processes took 1.9 of 2 cores (0.1 of it stolen by the hypervisor)"


@pytest.mark.parametrize(("asked", "seen", "threads", "said"), [
    (None, QUIET, None, None),
    (2, QUIET, 2, None),
    (None, HALF_TAKEN, 2, "the machine is busy (other processes took 1.9 of 4 cores): " + FITS.format(n=2)),
    (4, HALF_TAKEN, 4, "warning: --threads 4 oversubscribes the machine (other processes took 1.9 of 4 cores); "
                       "--threads 2 fits; measuring as asked, and " + NOT_JUDGED),
    (1, HALF_TAKEN, 1, "the machine is busy (other processes took 1.9 of 4 cores): --threads 1 fits; " + NOT_JUDGED),
    (None, ONE_LEFT, 1, "the machine is busy (other processes took 1.3 of 2 cores): " + FITS.format(n=1)),
    (None, ALL_TAKEN, 1, f"the machine is busy ({STOLEN}): " + NONE_FITS.format(n=1)),
    (2, ALL_TAKEN, 2, f"the machine is busy ({STOLEN}): " + NONE_FITS.format(n=2)),
    (None, UNKNOWN, None, "contention unknown before measuring (/proc/stat is hidden on this machine): threads as "
                          "asked, no count fitted to the machine"),
])
def test_verdict_chooses_the_threads_that_fit(asked: int | None, seen: Contention, threads: int | None,
                                              said: str | None) -> None:
    assert choose_threads(asked, seen) == ThreadChoice(threads, said)


BUSY_FIELDS = {"window_s": 1.0, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}


def test_report_says_which_figures_ran_oversubscribed(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    two = {**ENV, "threads": None, "torch_threads": 2}
    records = [record(XLA_NEW, "2025-01-02T10:00:00+00:00", "xla", backend, "matmul_300x300_float64",
                      samples(scale), contention=BUSY_FIELDS).model_copy(update={"env": two})
               for backend, scale in (("numpy", 35e-3), ("pytorch", 24e-3))]
    assert contention_threads_line(records) == (
        "oversubscribed: 2 threads where other processes left 0.4 of 2 cores (other processes took 1.6 of 2 cores): "
        "threads wait for cores others hold; --threads 1 fits (2 of 2 figures)")
    write_results(results_path, records)
    table = " ".join(invoke("report", "--results", str(results_path)).stdout.split())
    assert "oversubscribed: 2 threads where other processes left 0.4 of 2 cores" in table


def test_report_compares_a_run_at_more_threads_with_one_at_fewer(results_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    old = [record(XLA_OLD, "2025-01-01T10:00:00+00:00", "xla", "pytorch", "f_100000_float32", samples(442e-6))
           .model_copy(update={"env": {**ENV, "threads": 1}})]
    new = [record(XLA_NEW, "2025-01-02T10:00:00+00:00", "xla", "pytorch", "f_100000_float32", samples(96e-3))
           .model_copy(update={"env": {**ENV, "threads": 2}})]
    line = times_threads_line(new, old)
    assert line is not None and line.startswith("oversubscribed: 2 threads took 217.2× the time of 1 thread(s)")
    assert line.endswith("--threads 1 fits: xla f_100000_float32 pytorch (1 figure(s) of the two runs)")
    assert times_threads_line(old, old) is None  # the same threads: nothing to tell
    write_results(results_path, [*old, *new])
    # Named by its id: `previous` passes over a run of other settings (threads), and a named one is shown beside.
    shown = " ".join(invoke("report", "--results", str(results_path), "--baseline", XLA_OLD).stdout.split())
    assert "oversubscribed: 2 threads took 217.2× the time of 1 thread(s)" in shown


def words(text: str) -> str:
    """The text with its lines joined: the verdict wraps its stderr at the console's width."""
    return " ".join(text.split())


def test_verdict_measures_with_the_threads_that_fit(monkeypatch: pytest.MonkeyPatch, results_path: Path) -> None:
    import jax_benchmarks.measure.oversubscription as oversubscription
    from jax_benchmarks.verdict import cli as verdict_cli

    used: list[int | None] = []

    def measured(*args: Any) -> list[Any]:
        used.append(args[-1])
        raise KeyboardInterrupt  # stop before the page: what matters is the threads it measured with

    monkeypatch.setattr(oversubscription, "probe", lambda seconds=1.0: ONE_LEFT)
    monkeypatch.setattr(verdict_cli, "measure_with_progress", measured)
    result = invoke("verdict", "--results", str(results_path))
    assert used == [1]
    assert "every framework measures with --threads 1, which fits what they left" in words(result.stderr)
    used.clear()
    asked = invoke("verdict", "--threads", "1", "--results", str(results_path))
    assert used == [1] and "--threads 1 fits" in words(asked.stderr)
    used.clear()
    monkeypatch.setattr(oversubscription, "probe", lambda seconds=1.0: TWO_TAKEN_1_6)
    crowded = invoke("verdict", "--results", str(results_path))
    assert used == [1] and "no thread count fits" in words(crowded.stderr)
    used.clear()
    monkeypatch.setattr(oversubscription, "probe", lambda seconds=1.0: QUIET)
    quiet = invoke("verdict", "--results", str(results_path))
    assert used == [None] and "threads" not in quiet.stderr.split("verdict run")[0]
