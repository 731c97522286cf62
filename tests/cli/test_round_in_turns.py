"""A round taken in turns (cli/rounds.py's `run_round_in_turns`, `verdict --turns`): one fresh process per backend,
side by side, whose timed windows never overlap; a process that dies is run once more, alone; one that dies twice
is the round's failure. The stand-in processes are tiny scripts that take turns through the real arbiter."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.cli import rounds as round_loop
from jax_benchmarks.cli.rounds import Step, run_round_in_turns, run_steps

SRC = str(Path(__file__).resolve().parents[2] / "src")

# argv: backend name, turns socket, windows file, how it ends on each start ("0", "kill", ...: one per start, the
# last repeated), a file counting its starts.
STAND_IN = f"""
import os, signal, sys, time
sys.path.insert(0, {SRC!r})
from jax_benchmarks.measure.turns import TurnClient
name, path, windows, ends, count = sys.argv[1:6]
starts = len(open(count).read()) if os.path.exists(count) else 0
open(count, "a").write("x")
how = ends.split(",")[min(starts, len(ends.split(",")) - 1)]
print(f"{{name}} started")
client = TurnClient(path)
for _ in range(3):
    client.take()
    began = time.monotonic()
    time.sleep(0.02)
    with open(windows, "a") as out:
        out.write(f"{{name}} {{began}} {{time.monotonic()}}\\n")
    client.give()
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(how))
"""


def stand_ins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ends: dict[str, str]) -> Path:
    """Every process the round starts is the stand-in for its backend; the file its windows are written to."""
    windows = tmp_path / "windows"

    def argv(group: str, backend: str, options: Sequence[str], **_: Any) -> list[str]:
        turns = options[list(options).index("--turns") + 1]
        return [sys.executable, "-c", STAND_IN, backend, turns, str(windows), ends[backend],
                str(tmp_path / f"{backend}.starts")]

    monkeypatch.setattr(round_loop, "round_argv", argv)
    return windows


def windows_of(path: Path) -> list[tuple[str, float, float]]:
    rows = [line.split() for line in path.read_text().splitlines()]
    return sorted(((name, float(began), float(ended)) for name, began, ended in rows), key=lambda row: row[1])


def test_the_backends_windows_never_overlap_and_each_output_is_kept_whole(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    windows = stand_ins(monkeypatch, tmp_path, {"numpy": "0", "jax": "0"})
    log = tmp_path / "round.log"
    done = run_round_in_turns("xla", ["numpy", "jax"], [], rounds=3, index=0, run_id="r", log=log)
    assert (done.code, done.failure) == (0, "")
    taken = windows_of(windows)
    assert sorted(name for name, *_ in taken) == ["jax"] * 3 + ["numpy"] * 3
    for (_, _, ended), (_, began, _) in zip(taken, taken[1:]):
        assert began >= ended  # one window at a time
    text = log.read_text()
    assert text.index("== xla numpy, round 1/3 in turns (attempt 1): exit 0\nnumpy started") < text.index(
        "== xla jax, round 1/3 in turns (attempt 1): exit 0\njax started")


def test_a_process_with_options_of_its_own_gets_them_before_the_round_s(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    # `mnist pytorch --compile` joined to `mnist all`'s turns (verdict/cli.py's `taken_in_turns`).
    started: list[tuple[str, list[str]]] = []
    windows = stand_ins(monkeypatch, tmp_path, {"flax": "0", "pytorch": "0"})
    stand_in = round_loop.round_argv

    def argv(group: str, command: str, options: Sequence[str], **kwargs: Any) -> list[str]:
        started.append((command, list(options[:options.index("--turns")])))
        return stand_in(group, command, options, **kwargs)

    monkeypatch.setattr(round_loop, "round_argv", argv)
    log = tmp_path / "round.log"
    done = run_round_in_turns("mnist", ["flax", "pytorch --compile"], ["--epochs", "1"], rounds=3, index=0,
                              run_id="r", log=log)
    assert (done.code, done.failure) == (0, "")
    assert started == [("flax", ["--epochs", "1"]), ("pytorch", ["--compile", "--epochs", "1"])]
    assert "== mnist pytorch --compile, round 1/3 in turns (attempt 1): exit 0\npytorch started" in log.read_text()
    assert sorted(name for name, *_ in windows_of(windows)) == ["flax"] * 3 + ["pytorch"] * 3


def test_a_backend_killed_once_runs_once_more_alone(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    windows = stand_ins(monkeypatch, tmp_path, {"numpy": "0", "jax": "kill,0"})
    log = tmp_path / "round.log"
    done = run_round_in_turns("xla", ["numpy", "jax"], [], rounds=3, index=1, run_id="r", log=log)
    assert (done.code, done.failure) == (0, "")
    assert (tmp_path / "numpy.starts").read_text() == "x" and (tmp_path / "jax.starts").read_text() == "xx"
    assert "round 2/3 of xla: jax died: run once more, alone in turns" in log.read_text()
    assert sum(name == "jax" for name, *_ in windows_of(windows)) == 1 + 3  # its first window, then a whole run


def test_a_backend_killed_twice_fails_the_round(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stand_ins(monkeypatch, tmp_path, {"numpy": "0", "jax": "kill"})
    done = run_round_in_turns("xla", ["numpy", "jax"], [], rounds=3, index=0, run_id="r", log=tmp_path / "round.log")
    assert done.failure == "round 1 of xla failed twice: jax"
    assert done.code != 0


def test_run_steps_takes_a_step_in_turns_from_its_first_round_in_turns(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    taken: list[tuple[str, int]] = []
    monkeypatch.setattr(round_loop, "run_round", lambda group, command, options, **k: (
        taken.append(("one process", k["index"])), round_loop.RoundDone(k["label"], 0.0, 0))[1])
    monkeypatch.setattr(round_loop, "run_round_in_turns", lambda group, backends, options, **k: (
        taken.append(("in turns", k["index"])), round_loop.RoundDone(k["label"], 0.0, 0))[1])
    step = Step("scipy", "all", (), 1.0, in_turns=("numpy", "jax"), turns_from=1)
    run_steps([step], 3, tmp_path / "r.jsonl", "r", tmp_path / "log", lambda *_: None)
    assert taken == [("one process", 0), ("in turns", 1), ("in turns", 2)]


@pytest.mark.parametrize(("args", "words"), [
    (["--turns", "/nonexistent/turns"], "is not the socket of a running round's turns"),
    (["--turns", "/tmp"], "is not the socket of a running round's turns"),
])
def test_a_turns_option_that_is_not_a_round_s_socket_is_one_line(args: list[str], words: str) -> None:
    from tests.conftest import invoke

    result = invoke("xla", "numpy", *args, "--round-index", "0", "--run-id", "r", "--rounds", "2")
    assert result.exit_code == 2 and "'--turns'" in result.stderr and words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_the_page_says_its_rounds_were_taken_in_turns() -> None:
    from jax_benchmarks.verdict.page import IN_TURNS, Machine, banner
    from tests.verdict.fixtures import ENV, figure

    plain = figure("xla", "numpy", "matmul_300x300_float64", 0.01)
    in_turns = figure("xla", "numpy", "matmul_300x300_float64", 0.01, env={**ENV, "turns": True})
    assert IN_TURNS not in banner(Machine("Test CPU", [], {}, plain), "quick")
    assert IN_TURNS in banner(Machine("Test CPU", [], {}, in_turns), "quick")


# Two processes: "first" ends after one turn; "second" takes a turn, then another once "first" has ended, and writes
# the state /proc gives for "first" (Z: a zombie, its CPU time still readable by the round's processes).
ENDS_EARLY = f"""
import os, sys, time
sys.path.insert(0, {SRC!r})
from jax_benchmarks.measure.turns import TurnClient
name, path, out = sys.argv[1:4]
if name == "first":
    open(out + ".pid", "w").write(str(os.getpid()))
client = TurnClient(path)
client.take()
client.give()
if name == "second":
    client.take()
    other = int(open(out + ".pid").read())
    deadline = time.monotonic() + 5
    state = "gone"
    while time.monotonic() < deadline:
        try:
            state = open(f"/proc/{{other}}/stat").read().rpartition(")")[2].split()[0]
        except OSError:
            state = "gone"
            break
        if state == "Z":
            break
        time.sleep(0.01)
    open(out, "w").write(state)
    client.give()
"""


def test_a_process_that_ended_stays_readable_until_the_round_ends(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    state = tmp_path / "state"

    def argv(group: str, backend: str, options: Sequence[str], **_: Any) -> list[str]:
        return [sys.executable, "-c", ENDS_EARLY, backend, options[list(options).index("--turns") + 1], str(state)]

    monkeypatch.setattr(round_loop, "round_argv", argv)
    done = run_round_in_turns("xla", ["first", "second"], [], rounds=1, index=0, run_id="r", log=tmp_path / "log")
    assert done.code == 0
    assert state.read_text() == "Z"  # not reaped while "second" still measured


@pytest.mark.e2e
def test_a_real_round_in_turns_records_each_framework_from_its_own_process(tmp_path: Path) -> None:
    # The real CLI: `xla numpy` and `xla jax`, each in its own fresh process, taking turns.
    store = tmp_path / "r.jsonl"
    done = run_round_in_turns("xla", ["numpy", "jax"], ["--quick", "-k", "matmul", "--results", str(store)],
                              rounds=2, index=1, run_id="20261128T070000Z-cccccc", log=tmp_path / "log")
    assert (done.code, done.failure) == (0, ""), (tmp_path / "log").read_text()
    records = [json.loads(line) for line in store.read_text().splitlines()]
    assert sorted(r["backend"] for r in records) == ["jax", "numpy"]
    for record in records:
        assert record["env"]["turns"] is True and record["round_index"] == 1
        assert record["repeats"] >= 4  # the samples of 4 turns
