"""A round whose process dies is run once more in a fresh process (issue 48, bad input); one that dies twice is said
in its group's findings and never judged as a measured round. The one round loop (cli/rounds.py) does it for
`--rounds`, `verdict` and `calibrate`; a round that ended with the program's own failure (exit 1 or 2) is not run
again. The stand-in round is a tiny process that kills itself."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.cli import rounds as round_loop
from jax_benchmarks.cli.rounds import RoundFailed, Step, died, run_round, run_steps
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.build import build_page, build_verdict
from tests.verdict.fixtures import RUN, matmul

# Counts its starts in a file (argv[1]); ends the way argv[2] lists for that start: "kill" (SIGKILL to itself) or
# an exit code.
STAND_IN = """
import os, signal, sys
count = sys.argv[1]
starts = len(open(count).read()) if os.path.exists(count) else 0
open(count, "a").write("x")
how = sys.argv[2].split(",")[min(starts, len(sys.argv[2].split(",")) - 1)]
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(how))
"""


def stand_in(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ends: str) -> Path:
    """Every round started by the loop is the stand-in, ending as `ends` says start by start; its count file."""
    count = tmp_path / "starts"
    monkeypatch.setattr(round_loop, "round_argv", lambda *_a, **_k: [sys.executable, "-c", STAND_IN, str(count), ends])
    return count


def starts(count: Path) -> int:
    return len(count.read_text()) if count.exists() else 0


def test_a_round_killed_once_runs_once_more_in_a_fresh_process(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    count, log = stand_in(monkeypatch, tmp_path, "kill,0"), tmp_path / "round.log"
    done = run_round("xla", "numpy", [], rounds=3, index=1, run_id=RUN, log=log)
    assert (done.code, done.failure, starts(count)) == (0, "", 2)
    assert "round 2/3 of xla numpy died (killed by SIGKILL): run once more in a fresh process" in log.read_text()


def test_a_round_killed_twice_failed_twice(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    count = stand_in(monkeypatch, tmp_path, "kill,3")
    done = run_round("xla", "numpy", [], rounds=3, index=1, run_id=RUN, log=tmp_path / "round.log")
    assert done.code == 3 and starts(count) == 2
    assert done.failure == "round 2 of xla failed twice: killed by SIGKILL, then exit 3"
    assert done.ended == done.failure


@pytest.mark.parametrize("code", [1, 2])
def test_the_programs_own_failure_is_not_run_again(code: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    count = stand_in(monkeypatch, tmp_path, f"{code},0")
    done = run_round("xla", "numpy", [], rounds=3, index=0, run_id=RUN, log=tmp_path / "round.log")
    assert (done.code, done.failure, starts(count), done.ended) == (code, "", 1, f"exit {code}")


def test_which_codes_are_a_death() -> None:
    assert [code for code in (0, 1, 2) if died(code)] == []
    assert all(died(code) for code in (-signal.SIGKILL, -signal.SIGSEGV, 3, 130, 143, 137))


def test_rounds_option_fails_in_one_line_after_a_round_dies_twice(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    from jax_benchmarks.xla.settings import XlaSettings

    count = stand_in(monkeypatch, tmp_path, "kill")
    settings = XlaSettings.model_construct(rounds=3, results=tmp_path / "r.jsonl")
    with pytest.raises(RoundFailed, match="round 1 of xla failed twice: killed by SIGKILL, then killed by SIGKILL"):
        round_loop.rounds_of("xla", "numpy", settings, settings, RUN)
    assert starts(count) == 2  # round 1, and once more; no later round


def fake_launcher(monkeypatch: pytest.MonkeyPatch, dies: set[tuple[str, int]],
                  per_round: dict[int, Sequence[Record]], store: Path) -> list[tuple[str, int]]:
    """In-process rounds: each appends its round's records to `store`; a round in `dies` writes its records, then
    its process is killed (every time it is started)."""
    from jax_benchmarks.cli import relaunch

    started: list[tuple[str, int]] = []

    def run_fresh(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        group, index, run_id = argv[2], int(argv[argv.index("--round-index") + 1]), argv[argv.index("--run-id") + 1]
        started.append((group, index))
        with store.open("a", encoding="utf-8") as out:
            out.write("".join(r.model_copy(update={"run_id": run_id}).model_dump_json() + "\n"
                              for r in per_round.get(index, ())))
        return subprocess.CompletedProcess(argv, -signal.SIGKILL if (group, index) in dies else 0, "")

    monkeypatch.setattr(relaunch, "run_fresh", run_fresh)
    return started


def test_a_round_that_failed_twice_is_said_in_its_groups_findings_and_not_judged(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    records = matmul(0.010, 0.005)  # three rounds: jax clearly faster
    store = tmp_path / "r.jsonl"
    started = fake_launcher(monkeypatch, {("xla", 2)}, {i: [r for r in records if r.round_index == i] for i in range(3)},
                            store)
    done = run_steps([Step("xla", "all", ())], 3, store, RUN, tmp_path / "log", lambda *_: None)
    assert started == [("xla", 0), ("xla", 1), ("xla", 2), ("xla", 2)]
    assert [d.failure for d in done] == ["", "", "round 3 of xla failed twice: killed by SIGKILL, then killed by "
                                                 "SIGKILL"]
    kept = [Record.model_validate_json(line) for line in store.read_text().splitlines()]
    assert len(kept) == 8  # nothing recorded is lost: both dead tries' records stay in the store
    failed = [(d.group, d.index, d.failure) for d in done if d.failure]
    page = build_verdict(kept, None, RUN, "markdown", failed=failed).page
    assert "Round 3 of xla failed twice: killed by SIGKILL, then killed by SIGKILL; what it recorded stays" in page
    assert "2 vs 2 round(s)" in page and "3 vs 3 round(s)" not in page  # its records are not judged
    assert "failed twice" not in build_page(kept, None, RUN, "markdown")  # --from: no round failed here


def test_a_measuring_verdict_says_the_failed_round_and_exits_1(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    from jax_benchmarks.verdict import cli as verdict_cli
    from jax_benchmarks.verdict.scale import Scale
    from tests.conftest import invoke

    store, page = tmp_path / "r.jsonl", tmp_path / "page.md"
    records = matmul(0.010, 0.005)
    fake_launcher(monkeypatch, {("xla", 1)}, {i: [r for r in records if r.round_index == i] for i in range(3)}, store)
    quick = Scale("quick", 3, (Step("xla", "all", (), 1.0),), "test", 60.0)
    monkeypatch.setitem(verdict_cli.SCALES, "quick", quick)
    monkeypatch.setattr(verdict_cli, "add_rounds", lambda _scale, _budget, _results, _run, _log, done, *_: done)
    result = invoke("verdict", "--results", str(store), "--format", "markdown", "-o", str(page), "--budget", "60")
    assert result.exit_code == 1, result.stderr
    said = " ".join(result.stderr.split())
    assert "2 rounds in" in said and "(1 more failed twice)" in said
    assert "xla all · round 2/3 (round 2 of xla failed twice: killed by SIGKILL, then killed by SIGKILL)" in said
    assert "Round 2 of xla failed twice" in page.read_text()
