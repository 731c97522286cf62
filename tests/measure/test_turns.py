"""Rounds taken in turns (jax_benchmarks.measure.turns): the arbiter grants one timed window at a time, only while
every other process of the round waits; the core splits a figure's samples into turns; contention is read over a
process's own turns."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from jax_benchmarks.measure import turns as turns_module
from jax_benchmarks.measure.contention import Sampler
from jax_benchmarks.measure.timing import measure, time_runs
from jax_benchmarks.measure.turns import TURN_GAP_MAX_S, TURN_GAP_S, Arbiter, Gap, TurnClient, TurnSampler


class CountingTurns:
    """A stand-in for a process's turns: counts them and what ran inside."""

    def __init__(self, windows: int = 4) -> None:
        self.windows = windows
        self.held = False
        self.taken = 0
        self.calls_outside = 0

    def take(self) -> None:
        assert not self.held
        self.held, self.taken = True, self.taken + 1

    def give(self) -> None:
        assert self.held
        self.held = False

    def sampler(self, machine: Sampler) -> Sampler:
        return machine


def test_measure_in_turns_takes_every_call_in_a_turn_and_splits_the_samples_into_windows() -> None:
    turns = CountingTurns()

    def call() -> None:
        if not turns.held:
            turns.calls_outside += 1
        time.sleep(0.001)

    measurement = measure(call, repeats=8, min_time_s=0.02, block_s=0.0, turns=turns)
    assert turns.calls_outside == 0
    assert turns.taken == 4  # one turn a window, the first call and the warm-up in the first
    assert measurement.repeats >= 8
    assert sum(measurement.samples_s) >= 0.02


def test_measure_without_turns_is_one_window() -> None:
    measurement = measure(lambda: time.sleep(0.001), repeats=3, min_time_s=0.0, block_s=0.0)
    assert measurement.repeats == 3


def test_time_runs_in_turns_holds_each_run_in_a_turn_and_the_work_between_outside() -> None:
    turns = CountingTurns()
    between_inside: list[bool] = []
    time_runs(lambda: None, lambda _: None, 3, before_each=lambda: between_inside.append(turns.held), turns=turns)
    assert turns.taken == 3
    assert between_inside == [False, False, False]


class Worker(threading.Thread):
    """A process of a round, played by a thread with a pid of its own: `windows` timed windows, each 10 ms, logged;
    once it closed its connection, it tells the arbiter it ended (as the round's starter does for a process)."""

    def __init__(self, arbiter: Arbiter, name: str, windows: int, log: list[tuple[str, float, float]],
                 start_after_s: float = 0.0, work_between_s: float = 0.0, shutdown_s: float = 0.0,
                 pid: int | None = None) -> None:
        super().__init__(name=name)
        self.arbiter, self.windows, self.log = arbiter, windows, log
        self.start_after_s, self.work_between_s, self.shutdown_s = start_after_s, work_between_s, shutdown_s
        # No such process unless a real one is named: the arbiter reads no thread of it (a fixed gap).
        self.pid = pid if pid is not None else 10_000_000 + sum(map(ord, name))

    def run(self) -> None:
        time.sleep(self.start_after_s)
        client = TurnClient(self.arbiter.path, pid=self.pid)
        for _ in range(self.windows):
            client.take()
            began = time.monotonic()
            time.sleep(0.01)
            self.log.append((self.name, began, time.monotonic()))
            client.give()
            time.sleep(self.work_between_s)  # untimed work between turns
        client.close()
        time.sleep(self.shutdown_s)  # the interpreter's shutdown, after the socket closed
        self.log.append((f"{self.name} ended", time.monotonic(), time.monotonic()))
        self.arbiter.ended(self.pid)


def run_side_by_side(*workers: Worker) -> None:
    """Start every worker, then wait for each (a round's processes, side by side)."""
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=10)


def test_the_arbiter_grants_one_window_at_a_time_alternating_with_the_gap(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.02, until_quiet=False)) as arbiter:
        run_side_by_side(*(Worker(arbiter, name, 4, log) for name in ("a", "b")))
    names = [name for name, *_ in log if not name.endswith("ended")]
    log[:] = [row for row in log if not row[0].endswith("ended")]
    assert all(sorted(names[i:i + 2]) == ["a", "b"] for i in range(0, 8, 2))  # each cycle serves each once
    for (_, _, ended), (_, began, _) in zip(log, log[1:]):
        assert began - ended >= 0.02 - 1e-3  # never overlapping, the gap between
    assert arbiter.granted == 8


SPIN = ("import sys, time\nend = time.monotonic() + float(sys.argv[1])\nprint(end, flush=True)\n"
        "while time.monotonic() < end: pass\ntime.sleep(30)")


def spinning(seconds: float, in_child: bool = False) -> tuple[subprocess.Popen[bytes], float]:
    """A real process that spins one thread for `seconds` (as NumPy's OpenBLAS threads do for about 0.12 s after a
    call), then sleeps, or (`in_child`) one whose child does (a compile worker); and when the spinning ends
    (CLOCK_MONOTONIC is the machine's, so it reads as ours)."""
    code = (f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {SPIN!r}, sys.argv[1]])" if in_child
            else SPIN)
    process = subprocess.Popen([sys.executable, "-c", code, str(seconds)], stdout=subprocess.PIPE,
                               start_new_session=True)
    assert process.stdout is not None
    return process, float(process.stdout.readline())


def stop(process: subprocess.Popen[bytes]) -> None:
    """Kill the process and its child (its own session's process group)."""
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


@pytest.mark.parametrize("in_child", [False, True], ids=["its own thread", "its child's"])
def test_the_next_turn_waits_until_the_round_s_threads_stop_spinning(tmp_path: Path, in_child: bool) -> None:
    # A process of the round whose threads (or its child's) still spin (here, before its first turn) holds every
    # turn back until they stop; once the round is quiet, turns follow each other well before the cap.
    spinner, spin_ends = spinning(0.2, in_child)
    try:
        log: list[tuple[str, float, float]] = []
        with Arbiter(str(tmp_path / "turns"), expected=2) as arbiter:
            run_side_by_side(Worker(arbiter, "a", 3, log, pid=spinner.pid), Worker(arbiter, "b", 3, log))
        windows = [row for row in log if not row[0].endswith("ended")]
        assert len(windows) == 6
        assert windows[0][1] >= spin_ends  # no window beside the spinning thread
        # Each grant while the spinner lives read its threads (a's last window is the 5th or the 6th; once it ended
        # no thread of the round can be read and the last gap is the fixed one).
        assert len(arbiter.gaps_s) >= 5
        assert all(gap < TURN_GAP_MAX_S for gap in arbiter.gaps_s[1:])  # quiet: each later gap ended before the cap
    finally:
        stop(spinner)


def test_a_gap_ends_at_its_cap_where_the_threads_never_stop(tmp_path: Path) -> None:
    spinner, spin_ends = spinning(3.0)  # background work that outlasts any gap (compile workers)
    try:
        log: list[tuple[str, float, float]] = []
        with Arbiter(str(tmp_path / "turns"), expected=1) as arbiter:
            run_side_by_side(Worker(arbiter, "a", 2, log, pid=spinner.pid))
        windows = [row for row in log if not row[0].endswith("ended")]
        assert len(windows) == 2 and windows[-1][2] < spin_ends  # both windows while it still spun
        assert all(gap >= TURN_GAP_MAX_S for gap in arbiter.gaps_s) and len(arbiter.gaps_s) == 2
    finally:
        stop(spinner)


def test_where_no_thread_can_be_read_the_gap_is_the_fixed_one(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2) as arbiter:  # the workers' pids name no process
        run_side_by_side(*(Worker(arbiter, name, 2, log) for name in ("a", "b")))
    windows = [row for row in log if not row[0].endswith("ended")]
    for (_, _, ended), (_, began, _) in zip(windows, windows[1:]):
        assert began - ended >= TURN_GAP_S - 1e-3


def test_the_order_within_a_cycle_is_drawn_at_random(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.0, until_quiet=False)) as arbiter:
        run_side_by_side(*(Worker(arbiter, name, 20, log) for name in ("a", "b")))
    names = [name for name, *_ in log if not name.endswith("ended")]
    firsts = {names[i] for i in range(0, 40, 2)}
    assert firsts == {"a", "b"}  # a fixed order would give one name (chance of that at random: 2 in 2**20)


def test_no_window_is_granted_until_every_process_of_the_round_connected(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.0, until_quiet=False)) as arbiter:
        began = time.monotonic()
        run_side_by_side(Worker(arbiter, "early", 1, log), Worker(arbiter, "late", 1, log, start_after_s=0.3))
    assert log[0][1] - began >= 0.3  # the early one waited for the late one's start


def test_a_process_that_ended_before_connecting_is_not_waited_for(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.0, until_quiet=False)) as arbiter:
        arbiter.ended(999_999)  # the starter saw it exit; it never connected
        run_side_by_side(Worker(arbiter, "alone", 2, log))
    assert [name for name, *_ in log] == ["alone", "alone", "alone ended"]


def test_no_window_is_granted_while_another_process_works_between_its_turns(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.0, until_quiet=False)) as arbiter:
        run_side_by_side(Worker(arbiter, "busy", 2, log, work_between_s=0.3), Worker(arbiter, "quick", 2, log))
    busy_first_end = min(ended for who, _, ended in log if who == "busy")
    for who, began, _ in log:  # no window while busy did its 0.3 s of untimed work after its first turn
        if who == "quick":
            assert not busy_first_end < began < busy_first_end + 0.29


def test_no_window_is_granted_while_a_process_shuts_down_after_closing_its_connection(tmp_path: Path) -> None:
    log: list[tuple[str, float, float]] = []
    with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.0, until_quiet=False)) as arbiter:
        run_side_by_side(Worker(arbiter, "short", 1, log, shutdown_s=0.3), Worker(arbiter, "long", 3, log))
    ended = next(began for name, began, _ in log if name == "short ended")
    short_window = next(ended_at for name, _, ended_at in log if name == "short")
    for name, began, _ in log:  # long's windows: before short's turn, or after short ended, never in its shutdown
        if name == "long":
            assert not short_window <= began < ended


def test_a_client_whose_arbiter_is_gone_says_so(tmp_path: Path) -> None:
    arbiter = Arbiter(str(tmp_path / "turns"), expected=1)
    with arbiter:
        client = TurnClient(arbiter.path)
    with pytest.raises(RuntimeError, match="turns ended"):
        client.take()


def test_the_round_s_other_processes_are_counted_as_this_process_own(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    # Another process of the round used 1 s of CPU between two readings (its own turns, while this one waited): that
    # second is this process's own, not contention; once it ended, its last CPU time stays counted (no fall back).
    cpu = iter([5.0, 6.0, None])
    monkeypatch.setattr(turns_module, "process_tree_cpu_s", lambda pid, tick: next(cpu))
    with Arbiter(str(tmp_path / "turns"), expected=1) as arbiter:
        client = TurnClient(arbiter.path)
        client.take()
        assert client.round_pids == frozenset({os.getpid()})  # the round's processes, named by each grant
        client.give()
        client.close()
    client.round_pids = frozenset({os.getpid(), 4242})
    sampler = TurnSampler.of(client, Sampler.of_this_machine())
    first, second, third = sampler.read(), sampler.read(), sampler.read()
    assert second.own_cpu_s - first.own_cpu_s >= 1.0
    assert third.own_cpu_s >= second.own_cpu_s


@pytest.mark.parametrize(("background", "contended"), [("busy", True), ("idle", False)])
def test_what_a_waiting_process_uses_during_another_s_turn_is_contention(tmp_path: Path, background: str,
                                                                          contended: bool) -> None:
    # A process of the round waits for its turn while work of its own runs in the background (torch.compile's
    # compile workers starting; here a process that spins or sleeps, standing for that process): what it uses during
    # this process's turn is not this process's own, however the round's other CPU time is counted.
    code = ("import time\nprint(flush=True)\nend = time.monotonic() + 20\nwhile time.monotonic() < end: pass"
            if background == "busy" else "import time\nprint(flush=True)\ntime.sleep(20)")
    other = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    try:
        assert other.stdout is not None and other.stdout.readline() == b"\n"  # started: its start is not in the test
        with Arbiter(str(tmp_path / "turns"), expected=2, gap=Gap(0.0, until_quiet=False)) as arbiter:
            waiting = TurnClient(arbiter.path, pid=other.pid)
            mine = TurnClient(arbiter.path)

            def two_turns() -> None:  # whichever comes first in the cycle, it waits while mine is held
                for _ in range(2):
                    waiting.take()
                    waiting.give()

            asked = threading.Thread(target=two_turns)
            asked.start()
            mine.take()
            time.sleep(0.5)
            mine.give()
            mine.close()
            arbiter.ended(os.getpid())
            asked.join(timeout=5)
            waiting.close()
            arbiter.ended(other.pid)
        assert (mine.others_in_turns_s >= 0.25) is contended and (mine.others_in_turns_s == 0.0) is not contended
    finally:
        other.kill()
        other.wait()


def test_what_the_round_used_during_this_process_s_turns_is_not_counted_as_its_own(monkeypatch: pytest.MonkeyPatch,
                                                                                 tmp_path: Path) -> None:
    # Between two readings the round's other process used 1 s, 0.4 s of it during this process's turns (the
    # arbiter's `K`): 0.6 s is this process's own (their work while it waited), 0.4 s is contention of its figures.
    cpu = iter([5.0, 6.0])
    monkeypatch.setattr(turns_module, "process_tree_cpu_s", lambda pid, tick: next(cpu))
    with Arbiter(str(tmp_path / "turns"), expected=1) as arbiter:
        client = TurnClient(arbiter.path)
        client.close()
    client.round_pids = frozenset({os.getpid(), 4242})
    sampler = TurnSampler.of(client, Sampler.of_this_machine())
    first = sampler.read()
    client.others_in_turns_s = 0.4
    second = sampler.read()
    assert 0.6 <= second.own_cpu_s - first.own_cpu_s < 0.65  # this process's own time between is a few ms
