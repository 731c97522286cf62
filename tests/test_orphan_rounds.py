"""A process this program starts to run to its end (a verdict's round, a --rounds round, a smoke command) does not
outlive its starter (issue 47, item 7): SIGKILLed, the starter runs no handler, so the child gets SIGTERM from the
kernel (`relaunch.ending_with_parent`) and ends as on any SIGTERM, saying what it saved."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jax_benchmarks.cli.relaunch import ending_with_parent

SRC = Path(__file__).resolve().parents[1] / "src"
# The starter: runs one child through run_fresh, as verdict runs a round (its output to a file, like the log).
STARTER = """
import sys
sys.path.insert(0, sys.argv[1])
from jax_benchmarks.cli.relaunch import run_fresh
with open(sys.argv[3], "w") as log:
    run_fresh([sys.executable, "-c", sys.argv[2], sys.argv[4]], stdout=log, stderr=log)
"""
# The child: says its pid, then waits; on SIGTERM it says so in the log and ends, as a round says what it saved.
CHILD = """
import os, signal, sys, time
def ended(signum, frame):
    print("child: SIGTERM, parent now", os.getppid(), flush=True)
    sys.exit(143)
signal.signal(signal.SIGTERM, ended)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(60)
"""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended (its reaper collects it)
    except FileNotFoundError:
        return False


def wait_for(predicate: object, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


def test_a_child_of_a_killed_starter_ends_and_says_so(tmp_path: Path) -> None:
    pid_file, log = tmp_path / "child.pid", tmp_path / "round.log"
    starter = subprocess.Popen([sys.executable, "-c", STARTER, str(SRC), CHILD, str(log), str(pid_file)])
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text(), 20), "the child never started"
        child = int(pid_file.read_text())
        assert alive(child)
        starter.kill()  # SIGKILL: no handler of the starter runs
        starter.wait()
        assert wait_for(lambda: not alive(child), 5), "the child runs on as an orphan"
        assert "child: SIGTERM" in log.read_text()
    finally:
        if starter.poll() is None:
            starter.kill()
        if pid_file.exists() and pid_file.read_text() and alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_a_child_whose_starter_is_already_gone_does_not_start(tmp_path: Path) -> None:
    # The starter's pid given to the wrapper is not its parent's (it died between fork and prctl): it exits at once.
    argv = ending_with_parent([sys.executable, "-c", "open('ran', 'w')"])
    argv[argv.index(str(os.getpid()))] = "1"
    done = subprocess.run(argv, cwd=tmp_path, check=False, timeout=30)
    assert done.returncode == 128 + signal.SIGTERM and not (tmp_path / "ran").exists()


def test_the_wrapper_runs_the_command_as_given(tmp_path: Path) -> None:
    done = subprocess.run(ending_with_parent([sys.executable, "-c", "import sys; print(sys.argv[1:])", "a b", "-c"]),
                          capture_output=True, text=True, check=False, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == "['a b', '-c']"
