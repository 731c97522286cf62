"""Contention: known answers from injected /proc readings, and a real run beside CPU-bound processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from jax_benchmarks.measure.harness import Timed, sampled_case
from jax_benchmarks.measure.contention import (BUSY_CORES, Contention, CpuTicks, Reading, busy_line, fitting_threads,
                                               Sampler, contention_between, of_fields, parse_proc_stat, quota_of,
                                               unknown_line)

TICK = 0.01

def stat(*cpus: tuple[int, int, int, int]) -> str:
    """A /proc/stat text: per CPU (user, system, idle, steal) in ticks; the other fields 0."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    for n, (user, system, idle, steal) in enumerate(cpus):
        lines.append(f"cpu{n} {user} 0 {system} {idle} 0 0 0 {steal} 0 0")
    return "\n".join([*lines, "intr 1 2 3", "ctxt 99"]) + "\n"


def reading(wall: float, own: float, text: str, allowed: frozenset[int] | None = None,
            quota: float | None = None) -> Reading:
    return Reading(wall, own, parse_proc_stat(text, allowed, TICK), TICK, quota)


def test_parse_sums_busy_fields_of_allowed_cpus() -> None:
    text = "cpu0 10 1 2 100 7 3 4 5 0 0\ncpu1 20 0 0 50 0 0 0 0 0 0\ncpu2 1000 0 0 0 0 0 0 0 0 0\n"
    ticks = parse_proc_stat(text, frozenset({0, 1}), TICK)
    # user + nice + system + irq + softirq; idle and iowait are not busy; steal apart; cpu2 not allowed.
    assert ticks == CpuTicks(busy_s=pytest.approx((10 + 1 + 2 + 3 + 4 + 20) * TICK), steal_s=pytest.approx(0.05),
                             cpus=2)
    assert parse_proc_stat("intr 1 2\n", None, TICK) is None
    assert parse_proc_stat(text, None, TICK) is not None and parse_proc_stat(text, None, TICK).cpus == 3  # type: ignore[union-attr]


def test_others_took_what_is_busy_beyond_our_own_time() -> None:
    # 1 s window on 2 CPUs: 170 ticks busy in all, this process used 0.1 s: others took 1.6 cores.
    before = reading(0.0, 5.0, stat((0, 0, 0, 0), (0, 0, 0, 0)))
    after = reading(1.0, 5.1, stat((80, 5, 15, 0), (85, 0, 15, 0)))
    seen = contention_between(before, after)
    assert seen.others_cores == pytest.approx(1.6)
    assert seen.cores == 2 and seen.busy
    assert seen.sentence() == "other processes took 1.6 of 2 cores"


def test_quiet_machine_is_not_busy_and_our_own_time_is_not_contention() -> None:
    # This process kept both cores busy for the whole second: nobody else took anything.
    before = reading(10.0, 0.0, stat((0, 0, 0, 0), (0, 0, 0, 0)))
    after = reading(11.0, 2.0, stat((100, 0, 0, 0), (98, 2, 0, 0)))
    seen = contention_between(before, after)
    assert seen.others_cores == 0.0 and not seen.busy
    assert seen.as_fields() == {"window_s": 1.0, "busy": False, "cores": 2, "others_cores": 0.0, "steal_cores": 0.0}


def test_steal_counts_as_taken() -> None:
    before = reading(0.0, 0.0, stat((0, 0, 0, 0), (0, 0, 0, 0)))
    after = reading(2.0, 2.0, stat((100, 0, 40, 60), (100, 0, 40, 60)))  # 1.2 s of steal over 2 s
    seen = contention_between(before, after)
    assert seen.others_cores == pytest.approx(0.0) and seen.steal_cores == pytest.approx(0.6)
    assert seen.busy == (0.6 >= BUSY_CORES)
    assert "0.6 of it stolen by the hypervisor" in seen.sentence()


def test_only_the_cpus_this_process_may_use_count() -> None:
    # cpu2 and cpu3 are flat out with someone else's work, but this process runs on cpu0 and cpu1 only.
    before = reading(0.0, 0.0, stat(*[(0, 0, 0, 0)] * 4), frozenset({0, 1}))
    after = reading(1.0, 0.5, stat((25, 0, 75, 0), (25, 0, 75, 0), (100, 0, 0, 0), (100, 0, 0, 0)), frozenset({0, 1}))
    seen = contention_between(before, after)
    assert seen.cores == 2 and seen.others_cores == pytest.approx(0.0)


def test_hidden_proc_stat_says_unknown_never_a_guess() -> None:
    hidden = Reading(1.0, 0.5, None, TICK, None, "/proc/stat is hidden on this machine")
    seen = contention_between(Reading(0.0, 0.0, None, TICK), hidden)
    assert seen.others_cores is None and not seen.busy
    assert seen.sentence() == "contention unknown: /proc/stat is hidden on this machine"
    assert seen.as_fields()["unknown"] == "/proc/stat is hidden on this machine"


def test_cgroup_quota_says_unknown() -> None:
    assert quota_of("max 100000\n", None, None) is None
    assert quota_of("150000 100000\n", None, None) == 1.5
    assert quota_of(None, "-1", "100000") is None
    assert quota_of(None, "50000", "100000") == 0.5
    busy = stat((100, 0, 0, 0), (100, 0, 0, 0))
    seen = contention_between(reading(0.0, 0.0, stat((0, 0, 0, 0), (0, 0, 0, 0)), quota=1.5),
                              reading(1.0, 0.0, busy, quota=1.5))
    assert not seen.busy and seen.unknown is not None and "quota of 1.5 cores" in seen.unknown


def test_window_too_short_for_the_ticks_is_unknown() -> None:
    # 2 CPUs, 10 ms ticks: 20 ms of window could be off by 2 cores' worth.
    seen = contention_between(reading(0.0, 0.0, stat((0, 0, 0, 0), (0, 0, 0, 0))),
                              reading(0.02, 0.0, stat((2, 0, 0, 0), (2, 0, 0, 0))))
    assert seen.unknown is not None and "too short" in seen.unknown and not seen.busy


def test_others_never_above_the_cores_nor_below_zero() -> None:
    """The physical bound: other processes cannot take more cores than there are, nor negative time."""
    base = stat((0, 0, 0, 0), (0, 0, 0, 0))
    over = contention_between(reading(0.0, 0.0, base), reading(1.0, 0.0, stat((300, 0, 0, 0), (300, 0, 0, 0))))
    under = contention_between(reading(0.0, 0.0, base), reading(1.0, 3.0, stat((100, 0, 0, 0), (100, 0, 0, 0))))
    assert over.others_cores == 2.0 and under.others_cores == 0.0


def test_fields_read_back_and_one_line() -> None:
    busy = Contention(1.0, 2, 1.6, 0.0)
    quiet = Contention(1.0, 2, 0.1, 0.0)
    unknown = Contention(0.5, unknown="/proc/stat is hidden on this machine")
    assert of_fields(busy.as_fields()) == busy and of_fields(unknown.as_fields()) == unknown
    assert of_fields({}) is None
    assert busy_line([busy, quiet]) == ("1 of 2 figures taken on a busy machine (other processes took "
                                       f"{BUSY_CORES} cores or more); at worst other processes took 1.6 of 2 cores: threads "
                                       "beyond what is left wait for cores, --threads 1 fits")
    assert busy_line([quiet]) is None
    assert unknown_line([quiet, unknown]) == "contention unknown for 1 of 2 figures: /proc/stat is hidden on this machine"


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_every_timed_case_carries_its_contention() -> None:
    """The harness samples around the timed calls: the window covers them, and the record gets it."""
    _, measurement = sampled_case(Timed(lambda: spin(0.01)), 5, Sampler.of_this_machine())
    fields = measurement.contention
    window = fields["window_s"]
    assert isinstance(window, float) and window >= sum(measurement.samples_s)
    seen = of_fields(fields)
    assert seen is not None and (seen.unknown is not None or seen.cores == len(os.sched_getaffinity(0)))


@pytest.mark.slow
def test_cpu_bound_processes_beside_a_run_are_seen() -> None:
    """Two CPU-bound processes beside a 1 s window: at least one core taken by others (2 cores here)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        time.sleep(0.3)  # they are running
        sampler = Sampler.of_this_machine()
        before = sampler.read()
        spin(1.0)
        seen = contention_between(before, sampler.read())
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    if seen.unknown is not None:
        pytest.skip(seen.unknown)
    assert seen.busy, seen.sentence()


def test_the_threads_that_fit_what_others_left() -> None:
    assert fitting_threads(Contention(1.0, 2, 1.6, 0.0)) == 1
    assert fitting_threads(Contention(1.0, 16, 2.1, 0.0)) == 14
    assert fitting_threads(Contention(1.0, 2, 2.0, 0.0)) == 1  # never 0
    assert fitting_threads(Contention(1.0, unknown="hidden")) is None


def test_a_process_tree_keeps_the_cpu_of_the_children_its_members_reaped() -> None:
    # A process that runs a short-lived child (torch.compile's inductor runs the C++ compiler so, from its compile
    # workers) and reaps it: the child's CPU time must stay in the tree, read as another process of a round in turns
    # (`process_tree_cpu_s`) or as this process's live child (`children_cpu_s`), or it reads as another program's.
    from jax_benchmarks.measure.contention import children_cpu_s, process_tree_cpu_s

    tick = 1 / os.sysconf("SC_CLK_TCK")
    mine_before = children_cpu_s(tick)
    busy_child = "import time; end = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        f"subprocess.run([sys.executable, '-c', {busy_child!r}])\n"
        "print('reaped', flush=True)\n"
        "time.sleep(30)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "reaped"
        seen = process_tree_cpu_s(parent.pid, tick)
        assert seen is not None and seen >= 0.4  # the child's 0.4 s, its parent's own start on top
        assert children_cpu_s(tick) - mine_before >= 0.4  # the parent is this process's live child
    finally:
        parent.kill()
        parent.wait()
