"""The one launcher: how the program starts itself in fresh processes, and how it stops them.

Every fresh process of this program goes through here: a round of `--rounds`, a `smoke` command, a
`verdict` round (one after another: `run_fresh`) and the processes of `mnist --launch-local` (side by side:
`start` and `stop`, supervised by `mnist/cluster.py`).

The child runs the same interpreter and the same copy of the package as the parent, whether that copy
is installed in site-packages or is a checkout run through `main.py`: it is started as the package's
own `__main__.py` file, which puts the package's folder on the child's import path.

Stopping is the same everywhere: the child is handed the signal that stopped the parent (Ctrl-C or
SIGTERM), so that it finishes the record it is writing and says what it saved, and is killed only once
`STOP_GRACE_S` have passed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from jax_benchmarks.errors import interrupt_signal

PACKAGE_MAIN = Path(__file__).resolve().parents[1] / "__main__.py"
STOP_GRACE_S = 10.0  # how long a stopped child may take to end (a record being written is finished)
OWN_SIGINT_S = 1.0  # how long a child may take to end on the terminal's Ctrl-C it got itself, before it is handed one

Stream = int | IO[str] | IO[bytes] | None  # what Popen takes for stdin, stdout, stderr


# Linux: a child started to run to its end (`run_fresh`) gets SIGTERM when the process that started it ends, even
# SIGKILLed (prctl PR_SET_PDEATHSIG = 1, kept across exec), so that it does not run on as an orphan: it ends as on
# any SIGTERM, its record finished and what it saved said on its output (a verdict's round: in the log). Set by a
# small exec'd wrapper, not preexec_fn (forking a process that has JAX's threads running can deadlock); the wrapper
# ends at once if its parent (argv[1], the starting process's pid) is already gone. The signal comes when the
# starting *thread* ends: run_fresh waits for the child on the thread that starts it.
ENDS_WITH_PARENT = ("-c", "import ctypes, os, signal, sys; ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0); "
                          "os.getppid() == int(sys.argv[1]) or sys.exit(128 + signal.SIGTERM); "
                          "os.execv(sys.argv[2], sys.argv[2:])")


def ending_with_parent(argv: Sequence[str]) -> list[str]:
    """`argv`, started so that it gets SIGTERM when this process ends, however it ends (Linux; elsewhere as is)."""
    if not sys.platform.startswith("linux"):
        return list(argv)
    return [sys.executable, *ENDS_WITH_PARENT, str(os.getpid()), *argv]


def self_command() -> list[str]:
    """argv that starts this program; append the group, the command and its options."""
    return [sys.executable, str(PACKAGE_MAIN)]


def round_argv(group: str, command: str, options: Sequence[str], *, rounds: int, index: int, run_id: str) -> list[str]:
    """The argv of round `index` (from 0) of `rounds` of `group command options`, recorded under `run_id`."""
    return [*self_command(), group, command, *options,
            "--rounds", str(rounds), "--round-index", str(index), "--run-id", run_id]


@dataclass(frozen=True)
class Child:
    """A started process, and whether it leads a process group of its own."""

    process: subprocess.Popen[bytes]
    own_group: bool

    def poll(self) -> int | None:
        return self.process.poll()

    def send(self, signum: int) -> None:
        """`signum` to the process (to its group, where it leads one); gone: nothing."""
        try:
            if self.own_group:
                os.killpg(self.process.pid, signum)
            elif self.process.poll() is None:
                self.process.send_signal(signum)
        except (ProcessLookupError, PermissionError):
            pass


def start(argv: Sequence[str], *, stdin: Stream = None, stdout: Stream = None, stderr: Stream = None,
          env: Mapping[str, str] | None = None, cwd: str | None = None, own_group: bool = False) -> Child:
    """Start `argv`. `own_group`: it leads a process group of its own, so that a terminal's Ctrl-C reaches
    this process alone (which then stops it), and stopping it also ends what it started (a runtime's helpers)."""
    process = subprocess.Popen(list(argv), stdin=stdin, stdout=stdout, stderr=stderr,
                               env=dict(env) if env is not None else None, cwd=cwd, start_new_session=own_group)
    return Child(process, own_group)


def stop(children: Sequence[Child], signum: int = signal.SIGTERM, grace_s: float = STOP_GRACE_S) -> list[int]:
    """Hand `signum` to every child still running, kill those alive after `grace_s`; the indices of those that
    were running. A child that leads its own group is signalled as a group, and its group is killed even
    when the child itself ended: nothing it started outlives it."""
    running = [i for i, child in enumerate(children) if child.poll() is None]
    for i in running:
        children[i].send(signum)
    deadline = time.monotonic() + grace_s
    for i in running:
        with contextlib.suppress(subprocess.TimeoutExpired):
            children[i].process.wait(timeout=max(0.0, deadline - time.monotonic()))
    for child in children:
        child.send(signal.SIGKILL)
        child.process.wait()
    return running


def killed_by(code: int) -> str | None:
    """The signal that ended a child, named ('SIGKILL', 'signal 64'), where its return code says one did (a
    negative code: subprocess's way of saying so); None for a child that exited."""
    if code >= 0:
        return None
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_fresh(argv: Sequence[str], *, capture: bool = False, stdin: Stream = None, stdout: Stream = None,
              stderr: Stream = None) -> subprocess.CompletedProcess[str]:
    """Run `argv` to its end (`capture`: its stdout is returned as text). On Ctrl-C or SIGTERM here the child
    is stopped (`stop`; Ctrl-C at a terminal has reached it already, it gets `OWN_SIGINT_S` to end on that
    one) and the interrupt is raised again, for the caller to say what is saved. Where this process is killed
    (SIGKILL: no handler runs), the child gets SIGTERM (`ending_with_parent`) and does not run on as an orphan."""
    child = start(ending_with_parent(argv), stdin=stdin, stdout=subprocess.PIPE if capture else stdout,
                  stderr=stderr)
    try:
        output, _ = child.process.communicate()
    except KeyboardInterrupt as exc:
        signum = interrupt_signal(exc)
        if signum == signal.SIGINT:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=OWN_SIGINT_S)
        stop([child], signum)
        raise
    text = output.decode(errors="replace") if output is not None else None
    return subprocess.CompletedProcess(list(argv), child.process.returncode, text)
