"""Known answers on the host: a case that allocates a known number of bytes records that peak.

Tolerance: the peak above what the process held is at least the array's bytes less one 64 KiB
(the kernel counts resident pages, and a block's first page may already be resident), and at most
the array's bytes plus 8 MiB (the interpreter and the allocator around one call).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from jax_benchmarks.measure.harness import Case, Judgement, Target, Timed, run_cases
from jax_benchmarks.measure.memory import (AROUND_TIMED_RUN, MEASURED, SEPARATE_PASS, HostPeak, format_bytes,
                                           memory_text, read_status, status_bytes)
from jax_benchmarks.frameworks.descriptors import torch_device_memory
from jax_benchmarks.measure.timing import Measurement
from jax_benchmarks.run import Run

MIB = 2**20
ALLOCATED = 64 * MIB
BELOW = 64 * 1024
ABOVE = 8 * MIB
CPU = Target("numpy", "cpu")

linux_only = pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="reads Linux's /proc/self")


def allocate() -> NDArray[np.float64]:
    return np.ones(ALLOCATED // 8)  # np.ones writes every element: every page is resident


def run_one(tmp_path: Path, timed: Timed[object], judge: object = None) -> dict[str, object]:
    run = Run("test", tmp_path / "results.jsonl")
    case = Case("alloc_64MiB_float64", lambda: timed) if judge is None else Case(
        "alloc_64MiB_float64", lambda: timed, judge)  # type: ignore[arg-type]
    run_cases(run, CPU, [case], repeats=2)
    return dict(run.records[0].memory)


def assert_known_peak(memory: dict[str, object]) -> None:
    assert memory["host_status"] == MEASURED
    peak = memory["host_peak_bytes"]
    assert isinstance(peak, int)
    assert ALLOCATED - BELOW <= peak <= ALLOCATED + ABOVE, format_bytes(peak)


@linux_only
def test_a_repeatable_case_records_its_allocation_from_an_untimed_pass(tmp_path: Path) -> None:
    memory = run_one(tmp_path, Timed(allocate))
    assert memory["memory_method"] == SEPARATE_PASS
    assert_known_peak(memory)
    assert isinstance(memory["host_held_bytes"], int) and memory["host_held_bytes"] > 0


def leave_freed_heap_resident() -> NDArray[np.float64]:
    """Leave 100 MiB of freed heap memory resident, as earlier cases in a process can.

    glibc raises its mmap threshold to the size of a freed mmapped block (up to 32 MiB), so the next
    1 MiB blocks come from the heap; freeing them below a block still alive leaves their pages free
    but resident (glibc hands back only the heap's top on free). A 64 MiB allocation then reuses them
    without raising the resident set. Returns the block to keep alive while the case runs."""
    threshold_raiser = np.ones(16 * MIB // 8)
    del threshold_raiser
    blocks = [np.ones(MIB // 8) for _ in range(100)]
    above = np.ones(MIB // 8)
    del blocks
    return above


@linux_only
def test_work_done_once_is_measured_around_its_one_timed_call(tmp_path: Path) -> None:
    above = leave_freed_heap_resident()  # the heap an earlier case can leave: the peak must show all the same
    calls: list[int] = []

    def once() -> NDArray[np.float64]:
        calls.append(1)
        return allocate()

    memory = run_one(tmp_path, Timed(once, once=True))
    assert calls == [1]  # no extra call for the memory
    assert memory["memory_method"] == AROUND_TIMED_RUN
    assert_known_peak(memory)
    del above


@linux_only
def test_runs_are_measured_around_the_timed_runs_without_an_extra_run(tmp_path: Path) -> None:
    above = leave_freed_heap_resident()
    calls: list[int] = []

    def epoch() -> NDArray[np.float64]:
        calls.append(1)
        return allocate()

    memory = run_one(tmp_path, Timed(epoch, runs=3))
    assert len(calls) == 3
    assert memory["memory_method"] == AROUND_TIMED_RUN
    peak = memory["host_peak_bytes"]
    # Each run's result is dropped before the next: at most two arrays alive at once.
    assert isinstance(peak, int) and ALLOCATED - BELOW <= peak <= 2 * ALLOCATED + ABOVE
    del above


@linux_only
def test_work_timed_once_without_memory_figures_starts_from_the_same_heap(tmp_path: Path) -> None:
    """--no-memory times work done once from the heap --memory does: the timing does not depend on it."""
    above = leave_freed_heap_resident()
    growth: list[int] = []

    def once() -> NDArray[np.float64]:
        before = read_status()["VmRSS"]
        array = allocate()
        growth.append(read_status()["VmRSS"] - before)
        return array

    run = Run("test", tmp_path / "results.jsonl")
    run_cases(run, CPU, [Case("alloc_64MiB_float64", lambda: Timed(once, once=True))], repeats=1, memory=False)
    assert not run.records[0].memory
    assert len(growth) == 1 and growth[0] >= ALLOCATED - BELOW, format_bytes(growth[0])
    del above


@linux_only
def test_a_case_that_allocates_nothing_records_a_small_peak(tmp_path: Path) -> None:
    small = np.ones(16)
    memory = run_one(tmp_path, Timed(lambda: small.sum()))
    peak = memory["host_peak_bytes"]
    assert isinstance(peak, int) and peak < 2 * MIB


def test_the_memory_pass_is_one_call_after_the_samples_and_its_result_is_judged(tmp_path: Path) -> None:
    calls: list[int] = []
    judged: list[int] = []

    def call() -> int:
        calls.append(len(calls))
        return len(calls) - 1

    def judge(result: int, _m: Measurement) -> Judgement:
        judged.append(result)
        return Judgement()

    run_one(tmp_path, Timed(call), judge)
    assert judged == [calls[-1]]  # the last call, made after every timed one


def test_the_pass_is_one_extra_call_and_without_it_there_is_none(tmp_path: Path) -> None:
    for memory in (True, False):
        calls: list[int] = []
        run = Run("test", tmp_path / f"{memory}.jsonl")
        measured = run_cases(run, CPU, [Case("c", lambda: Timed(lambda: calls.append(1)))], repeats=2,
                             memory=memory)
        m = measured["c"]
        timed_calls = 1 + m.warmup + m.repeats * m.calls_per_sample  # first call, warm-up, samples
        assert len(calls) == timed_calls + memory
        assert bool(run.records[0].memory) is memory


def test_unavailable_peak_is_said_never_guessed(tmp_path: Path) -> None:
    host = HostPeak(clear_refs=tmp_path / "absent" / "clear_refs")
    host.start()
    figures = host.stop()
    assert set(figures) == {"host_status"}
    assert str(figures["host_status"]).startswith("unavailable: ") and "does not exist" in str(figures["host_status"])


def test_unreadable_status_is_said(tmp_path: Path) -> None:
    clear_refs = tmp_path / "clear_refs"
    status = tmp_path / "status"
    status.write_text("Name:\tpython\n")  # no VmRSS line
    host = HostPeak(status=status, clear_refs=clear_refs)
    host.start()
    figures = host.stop()
    assert set(figures) == {"host_status"} and "VmRSS" in str(figures["host_status"])


def test_status_lines_are_read_in_bytes() -> None:
    text = "Name:\tpython\nVmPeak:\t  3060 kB\nVmHWM:\t    1784 kB\nVmRSS:\t    1700 kB\nThreads:\t1\n"
    assert status_bytes(text) == {"VmPeak": 3060 * 1024, "VmHWM": 1784 * 1024, "VmRSS": 1700 * 1024}


def test_bytes_and_log_text() -> None:
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.5 KiB"
    assert format_bytes(64 * MIB) == "64 MiB"
    assert format_bytes(3 * 2**30) == "3 GiB"
    assert memory_text({"host_peak_bytes": 64 * MIB}) == "host peak 64 MiB"
    assert memory_text({"host_status": "unavailable: x"}) == ""
    assert memory_text({"device_peak_bytes": MIB, "device_reserved_bytes": 2 * MIB}) == \
        "device peak 1 MiB (reserved 2 MiB)"


def test_no_device_figure_for_a_case_on_the_cpu(tmp_path: Path) -> None:
    memory = run_one(tmp_path, Timed(lambda: 1))
    assert not any(key.startswith("device_") for key in memory)


def test_a_gpu_case_without_a_visible_gpu_says_why(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is visible: the device figures are tested in tests/test_installation.py")
    run = Run("test", tmp_path / "results.jsonl")
    run_cases(run, Target("pytorch", "gpu"), [Case("c", lambda: Timed(lambda: 1))], repeats=1,
              device_memory=torch_device_memory)
    memory = run.records[0].memory
    assert memory["device_status"] == "unavailable: PyTorch sees no CUDA device"
    assert "device_peak_bytes" not in memory


def test_a_gpu_case_of_a_backend_that_declares_no_device_memory_says_so(tmp_path: Path) -> None:
    run = Run("test", tmp_path / "results.jsonl")
    run_cases(run, Target("cupy", "gpu"), [Case("c", lambda: Timed(lambda: 1))], repeats=1)
    memory = run.records[0].memory
    assert memory["device_status"] == "unavailable: no allocator statistics are read for the cupy backend"
    assert "device_peak_bytes" not in memory
