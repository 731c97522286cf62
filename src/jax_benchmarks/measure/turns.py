"""Rounds taken in turns: the processes of one round, one per framework, take turns at the timed windows.

Why (docs/verdict.md, "Rounds taken in turns"): on a shared VM the CPU's speed wanders by up to 1.8× over seconds
with nothing else running, so two frameworks timed a few seconds apart in one process see different machines, and
that drift is most of a figure's spread between rounds. Timed a fraction of a second apart, in two warm processes,
they see the same machine (benchmarks/adjacent_workers.py: a session's A/A estimate spread 14–21× less in variance
than the same windows 3 s apart). Called alternately in *one* process they do not: one library's worker threads are
still spinning when the other's call starts (JAX's matmul at 1.44–1.98× NumPy's). So each framework gets its own
process, and the processes take turns:

* a process asks for a turn before each timed window (`Turns.take`) and hands it back after (`Turns.give`);
* the round's `Arbiter` (in the process that started the round) grants a turn only while every other process of the
  round is waiting for one (or has ended), so a timed window never runs beside another process's imports, compiles,
  data or memory pass: untimed work of the processes overlaps, timed work never does;
* between one turn and the next the arbiter waits until the round's processes are quiet (`QUIET_CORES` over the
  last `QUIET_WINDOW_S`, read from their threads' run time), at most `TURN_GAP_MAX_S`: OpenBLAS's worker threads spin
  for about 0.12 s after a call (`OPENBLAS_THREAD_TIMEOUT`; after NumPy's 1000×1000 matmul on this kind of VM:
  116–120 ms), and they would take the next process's cores, while PyTorch's spin for 4–6 ms and JAX's not at all
  (benchmarks/thread_spin.py), so a fixed gap is either too short after NumPy or wasted after the others;
* the turns go in cycles: in each, every process of the round gets one turn, in an order drawn at random for the cycle
  (randomised interleaving, as in Abedi and Brecht's "Conducting repeatable experiments in highly variable cloud
  computing environments", ICPE 2017), so that no framework's windows always follow the same other framework's: a
  fixed order would be a bias that every round repeats, and that a paired test over rounds would take for a
  difference.

The protocol, over a Unix socket whose path the round's processes get as `--turns PATH`: a process connects and
sends its pid and a newline, and the arbiter greets it with the turns a figure's samples are split into and a
newline; `T` asks for a turn, the arbiter answers `G`, the round's pids (comma-separated) and a newline when it is
granted; `D` hands it back, and the arbiter answers `K`, the CPU seconds the round's other processes have used during
this process's turns so far, and a newline. The starter tells the arbiter of each process that ended
(`Arbiter.ended`): one that never connected is not waited for, and one whose socket closed is still at work (its
interpreter shutting down) until then.

What other processes took of the machine is read as always, over a case's span, but the CPU time of the round's
other processes is counted as this process's own (`TurnSampler`): their windows, while this one waited, are not
contention of its figures; what processes outside the round took still is, and so is what the round's other
processes used *during* this process's turns (the arbiter reads their CPU time at each grant and at each hand-back:
`K`): a process waiting for its turn can still work in the background (torch.compile's compile workers starting,
a thread of its own), and that work took this process's cores while it measured.
"""

from __future__ import annotations

import os
import random
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Protocol

from jax_benchmarks.measure.contention import Reading, Sampler, process_tree_cpu_s, tree_threads_run_s

# Between one turn and the next, the arbiter waits until the round's processes are quiet: their threads together ran
# less than QUIET_CORES of a core over the last QUIET_WINDOW_S. The window spans at least one scheduler tick at 100 Hz
# and three at 250 Hz (a running thread's run time moves at its ticks: `threads_run_s`), so a spinning thread shows.
QUIET_WINDOW_S = 0.012
QUIET_CORES = 0.1
# The longest gap: a process whose background work never stops (compile workers) does not stall the round; what it
# takes during the next turn is that turn's contention (`K`). OpenBLAS's threads spin 2**28 cycles after a call (its
# default OPENBLAS_THREAD_TIMEOUT: 0.11-0.12 s at 2.2-2.5 GHz), well within it.
TURN_GAP_MAX_S = 0.3
# Where the threads' run time cannot be read (no /proc/<pid>/task/<tid>/schedstat), a fixed gap: the 0.1 s that
# benchmarks/turns_rounds.py measured before the gap followed the threads (no gap: rounds spread twice as much).
TURN_GAP_S = 0.1
# How often the arbiter reads the threads during a gap.
SETTLE_POLL_S = 0.003


@dataclass(frozen=True)
class Gap:
    """What the arbiter leaves between one turn and the next: at least `at_least_s` after the last turn ended, and,
    `until_quiet`, until the round's processes are quiet (`Arbiter._gap_over`)."""

    at_least_s: float = 0.0
    until_quiet: bool = True

    @classmethod
    def parse(cls, text: str) -> Gap:
        """'settle': until quiet; 'settle:0.05': that, and at least 0.05 s; '0.1': a fixed 0.1 s (the benchmarks'
        --gap)."""
        if text.startswith("settle"):
            return cls(float(text.partition(":")[2] or 0.0), until_quiet=True)
        return cls(float(text), until_quiet=False)

    def __str__(self) -> str:
        """'until quiet', 'until quiet, at least 0.05 s', '0.1 s'."""
        if not self.until_quiet:
            return f"{self.at_least_s:g} s"
        return "until quiet" + (f", at least {self.at_least_s:g} s" if self.at_least_s else "")


# The arbiter's gap in a verdict's rounds.
TURN_GAP = Gap()
# A timed window of samples is split into this many turns, each `min_time_s / TURN_WINDOWS` long and holding at least
# its share of the samples: each framework's fastest sample is then taken from several moments of the round, each
# beside the other frameworks' turns.
TURN_WINDOWS = 4

ASK, GRANTED, DONE, KEPT = b"T", b"G", b"D", b"K"


class Turns(Protocol):
    """A process's side of the turns: `take` blocks until this process may run a timed window alone; `windows`: the
    turns a figure's samples are split into (the arbiter's)."""

    windows: int

    def take(self) -> None: ...

    def give(self) -> None: ...

    def sampler(self, machine: Sampler) -> Sampler:
        """The sampler a case's contention is read with (the round's other processes counted as this one)."""
        ...


@contextmanager
def turn(turns: Turns | None) -> Iterator[None]:
    """A timed window, in a turn where `turns` is given (a round taken in turns), else as it is."""
    if turns is None:
        yield
        return
    turns.take()
    try:
        yield
    finally:
        turns.give()


class ArbiterGone(RuntimeError):
    """The round's arbiter closed the connection (its starter ended)."""

    def __init__(self) -> None:
        super().__init__("the round's turns ended (the process that started the round is gone)")


class TurnClient:
    """This process's connection to its round's arbiter. Each grant names the round's processes (`round_pids`), whose
    CPU time `TurnSampler` counts as this process's own."""

    def __init__(self, path: str, pid: int | None = None) -> None:
        """`pid`: the process this client speaks for (default: this one; a test's threads stand for processes)."""
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.connect(path)
        self._socket.sendall(f"{os.getpid() if pid is None else pid}\n".encode())
        self.windows = int(self._line())
        self.round_pids: frozenset[int] = frozenset()
        # CPU seconds the round's other processes used during this process's turns (the arbiter's `K`).
        self.others_in_turns_s = 0.0

    def _line(self) -> bytes:
        """The arbiter's next line (the greeting: the turns a figure's samples are split into; a grant: the pids)."""
        line = b""
        while not line.endswith(b"\n"):
            try:
                byte = self._socket.recv(1)
            except OSError:
                byte = b""
            if not byte:
                raise ArbiterGone()
            line += byte
        return line.strip()

    def take(self) -> None:
        try:
            self._socket.sendall(ASK)
        except OSError:
            raise ArbiterGone() from None
        answer = self._line()
        if not answer.startswith(GRANTED):
            raise ArbiterGone()
        self.round_pids = frozenset(int(pid) for pid in answer[1:].split(b",") if pid)

    def give(self) -> None:
        try:
            self._socket.sendall(DONE)
        except OSError:
            raise ArbiterGone() from None
        answer = self._line()
        if not answer.startswith(KEPT):
            raise ArbiterGone()
        self.others_in_turns_s = float(answer[1:])

    def sampler(self, machine: Sampler) -> Sampler:
        return TurnSampler.of(self, machine)

    def close(self) -> None:
        self._socket.close()


@dataclass(frozen=True)
class TurnSampler(Sampler):
    """A `Sampler` that counts the CPU time of the round's other processes (and their children) as this process's
    own, less what they used during this process's turns (`TurnClient.others_in_turns_s`): what they did while this
    process waited is their own turns' and untimed work, not contention of its figures; what they did while it held
    its turn is, as is what processes outside the round took. A process of the round that ended keeps its last CPU
    time (its counter does not fall back)."""

    client: TurnClient | None = None
    seen: dict[int, float] = field(default_factory=dict)  # the round's processes' CPU seconds, last read

    @classmethod
    def of(cls, client: TurnClient, machine: Sampler) -> TurnSampler:
        return cls(machine.tick_s, machine.quota_cores, machine.allowed, machine.gpu, client)

    def read(self) -> Reading:
        base = super().read()
        if self.client is None:
            return base
        for pid in self.client.round_pids - {os.getpid()}:
            now = process_tree_cpu_s(pid, self.tick_s)
            if now is not None:
                self.seen[pid] = max(now, self.seen.get(pid, 0.0))
        return replace(base, own_cpu_s=base.own_cpu_s + sum(self.seen.values()) - self.client.others_in_turns_s)


@dataclass(eq=False)
class _Member:
    sock: socket.socket
    pid: int | None = None
    waiting: bool = False
    buffer: bytes = b""
    others_in_turns_s: float = 0.0  # the round's other processes' CPU seconds during this member's turns


class Arbiter:
    """The turns of one round (see the module's docstring), served by a thread of the process that starts the round.

    `expected`: how many processes the round starts; no turn is granted until each has connected or ended
    (`ended`), so that the first window is not taken beside another process's start. A process whose connection
    closed still works until its starter says it ended (`ended`): Python closes the socket while the interpreter
    shuts down, and that shutdown (JAX's and PyTorch's teardown) must not run beside another process's window."""

    def __init__(self, path: str, expected: int, gap: Gap = TURN_GAP, windows: int = TURN_WINDOWS) -> None:
        self.path = path
        self.gap = gap
        self.windows = windows
        self._expected = expected
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(path)
        self._listener.listen(expected)
        self._members: dict[int, _Member] = {}  # by socket fileno
        self._holder: _Member | None = None
        self._free_at = 0.0  # when the last turn ended: the next starts once the gap is over (`_gap_over`)
        self._since_free: list[tuple[float, dict[int, float]]] = []  # the threads' run time read since then
        self.gaps_s: list[float] = []  # how long each settled gap waited once every process waited (tests read them)
        self._lock = threading.Lock()
        self._connected: set[int] = set()  # the pid of every process that connected, ever
        self._ended: set[int] = set()  # the pids the starter said ended (connected or not)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="turns", daemon=True)
        self._cycle: list[_Member] = []  # the members still to be served in this cycle, in the cycle's order
        self._draw = random.Random()
        self.granted = 0
        self._tick_s = 1.0 / os.sysconf("SC_CLK_TCK")
        self._others_at_grant: dict[int, float] = {}  # the other processes' CPU seconds when the turn was granted

    def __enter__(self) -> Arbiter:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for member in self._members.values():
            member.sock.close()
        self._listener.close()
        os.unlink(self.path)

    def ended(self, pid: int) -> None:
        """A process of the round ended (the starter saw it exit): one that never connected is not waited for, one
        whose connection closed no longer works."""
        with self._lock:
            self._ended.add(pid)

    def _still_to_connect(self) -> int:
        """The processes neither connected nor ended (one that connected and has not sent its pid yet counts as
        connected)."""
        unnamed = sum(1 for member in self._members.values() if member.pid is None)
        return self._expected - len(self._connected | self._ended) - unnamed

    def _closing(self) -> set[int]:
        """The processes whose connection closed but that have not ended: still at work (shutting down)."""
        live = {member.pid for member in self._members.values()}
        return self._connected - self._ended - live

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ)
        while not self._stop.is_set():
            # While every process waits for a turn, the gap's threads are read every SETTLE_POLL_S; otherwise a
            # message (a request, a hand-back) ends the wait.
            waiting = self._holder is None and all(member.waiting for member in self._members.values())
            wait = SETTLE_POLL_S if waiting else 0.05
            for key, _ in selector.select(timeout=wait):
                if key.fileobj is self._listener:
                    sock, _ = self._listener.accept()
                    sock.sendall(f"{self.windows}\n".encode())
                    with self._lock:
                        self._members[sock.fileno()] = _Member(sock)
                    selector.register(sock, selectors.EVENT_READ)
                    continue
                member = self._members[key.fd]
                data = member.sock.recv(4096)
                if not data:
                    self._leave(selector, member)
                    continue
                self._read(member, data)
            self._grant()
        selector.close()

    def _leave(self, selector: selectors.BaseSelector, member: _Member) -> None:
        selector.unregister(member.sock)
        with self._lock:
            del self._members[member.sock.fileno()]
        member.sock.close()
        if self._holder is member:
            self._hand_back()

    def _read(self, member: _Member, data: bytes) -> None:
        member.buffer += data
        if member.pid is None:
            line, newline, rest = member.buffer.partition(b"\n")
            if not newline:
                return
            member.pid, member.buffer = int(line), rest
            with self._lock:
                self._connected.add(member.pid)
        for byte in member.buffer:
            message = bytes([byte])
            if message == ASK:
                member.waiting = True
            elif message == DONE and self._holder is member:
                self._hand_back()
                member.others_in_turns_s += self._others_since_grant(member)
                member.sock.sendall(KEPT + f"{member.others_in_turns_s!r}\n".encode())
        member.buffer = b""

    def _hand_back(self) -> None:
        self._holder, self._free_at, self._since_free = None, time.monotonic(), []

    def _gap_over(self, live: set[int]) -> bool:
        """Whether the next turn may start, once every process of the round waits for one: `gap.at_least_s` has
        passed since the last turn ended and, where the gap is `until_quiet`, the threads of the round's live
        processes and their descendants (compile workers) together ran less than QUIET_CORES of a core over the last
        QUIET_WINDOW_S (a process that started since is counted from its first reading), or they have been read for
        TURN_GAP_MAX_S; where no thread's run time can be read, TURN_GAP_S has passed since the last turn ended. The
        threads are read from the moment every process waits (`_grant` calls this only then, every SETTLE_POLL_S): a
        process that asks for a turn right after untimed work of its own (its data, a compile) leaves threads
        spinning too."""
        now = time.monotonic()
        if now - self._free_at < self.gap.at_least_s:
            return False
        if not self.gap.until_quiet:
            return True
        readings = {each: run for pid in live for each, run in tree_threads_run_s(pid).items()}
        if not readings:
            return now - self._free_at >= TURN_GAP_S
        self._since_free.append((now, readings))
        if now - self._since_free[0][0] >= TURN_GAP_MAX_S:
            return True
        # The latest reading at least a window old: what the threads ran since then, against the window's share.
        old = [(at, before) for at, before in self._since_free if at <= now - QUIET_WINDOW_S]
        if not old:
            return False
        at, before = old[-1]
        ran = sum(max(0.0, run - before[pid]) for pid, run in readings.items() if pid in before)
        return ran < QUIET_CORES * (now - at)

    def _others_cpu_s(self, holder: _Member) -> dict[int, float]:
        """CPU seconds of every process of the round but `holder`, with their descendants (those that ended and were
        reaped: not read)."""
        with self._lock:
            others = self._connected - {holder.pid}
        return {pid: cpu for pid in others if (cpu := process_tree_cpu_s(pid, self._tick_s)) is not None}

    def _others_since_grant(self, holder: _Member) -> float:
        """What the round's other processes used since `holder`'s turn was granted (a zombie's counter stands still:
        the starter keeps a process that ended unreaped until the round ends)."""
        after = self._others_cpu_s(holder)
        return sum(max(0.0, after[pid] - before) for pid, before in self._others_at_grant.items() if pid in after)

    def _grant(self) -> None:
        """A turn to the next member of this cycle (a new cycle, in an order drawn at random, once every member was
        served), where nobody holds one, every member is waiting (none is working between turns), none is still to
        connect or shutting down, and the gap since the last turn is over (`_gap_over`). The grant names every
        process of the round, ended ones too (`TurnSampler` counts their CPU time as the taker's own)."""
        if self._holder is not None:
            return
        with self._lock:
            members = list(self._members.values())
            blocked = self._still_to_connect() > 0 or bool(self._closing())
            pids = ",".join(str(pid) for pid in sorted(self._connected))
            live = self._connected - self._ended
        if not members or blocked or not all(m.waiting for m in members) or not self._gap_over(live):
            return
        if self._since_free:
            self.gaps_s.append(time.monotonic() - self._since_free[0][0])
        self._cycle = [member for member in self._cycle if member in members]  # those that left are gone
        if not self._cycle:
            self._cycle = self._draw.sample(members, len(members))
        chosen = self._cycle.pop(0)
        chosen.waiting = False
        self._holder = chosen
        self.granted += 1
        self._others_at_grant = self._others_cpu_s(chosen)
        chosen.sock.sendall(GRANTED + f"{pids}\n".encode())

