"""`verdict --threads N`: every group round gets the same thread count; more than the cores is refused."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.verdict import cli as verdict_cli
from jax_benchmarks.verdict.scale import Scale, Step
from tests.conftest import invoke


def test_every_round_is_given_the_threads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from jax_benchmarks.cli import relaunch

    started: list[list[str]] = []

    def run(argv: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        started.append(argv)
        return subprocess.CompletedProcess(argv, 0)

    # Every round starts through the one launcher (cli/relaunch.py); none is really started here.
    monkeypatch.setattr(relaunch, "run_fresh", run)
    scale = Scale("quick", 2, (Step("xla", "numpy", ("--matrix-size", "64"), 1.0),
                               Step("jit", "jax", (), 1.0)), "test")
    verdict_cli.measure(scale, tmp_path / "r.jsonl", "run", tmp_path / "log", lambda *_: None, threads=1)
    assert len(started) == 4 and all(argv[argv.index("--threads") + 1] == "1" for argv in started)
    started.clear()
    verdict_cli.measure(scale, tmp_path / "r.jsonl", "run", tmp_path / "log", lambda *_: None)
    assert len(started) == 4 and not any("--threads" in argv for argv in started)


def test_more_threads_than_cores_is_refused_before_anything_runs() -> None:
    cores = len(os.sched_getaffinity(0))
    result = invoke("verdict", "--threads", str(cores + 1))
    assert result.exit_code == 2
    assert f"{cores + 1} threads requested but this process may use {cores} core(s); allowed: 1–{cores}" in result.stderr
