"""A measuring verdict end to end: rounds in fresh processes under one run id, then the page.

The default suite runs the plumbing on one cheap command (`scipy numpy`, three rounds); the whole
`--scale quick` (every group, three rounds each) takes 4–6 minutes on this shared 2-core machine, so it
is marked slow: `pytest -m slow tests/verdict/test_run.py`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.groups import BENCHMARK_GROUPS
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.cli import measure
from jax_benchmarks.verdict.scale import Scale, Step

REPO = Path(__file__).resolve().parents[2]


def read(path: Path) -> list[Record]:
    return [Record.model_validate(json.loads(line)) for line in path.read_text().splitlines() if line.strip()]


def test_rounds_run_in_fresh_processes_under_one_run_id(tmp_path: Path) -> None:
    scale = Scale("quick", 2, (Step("scipy", "numpy", ("--quick", "-k", "solve"), 1.0),), "test")
    shown: list[tuple[str, int, float]] = []
    rounds = measure(scale, tmp_path / "r.jsonl", "20261124T120000Z-abcdef", tmp_path / "r.log",
                     lambda label, done, left: shown.append((label, done, left)))
    assert [r.code for r in rounds] == [0, 0]
    records = read(tmp_path / "r.jsonl")
    assert {r.run_id for r in records} == {"20261124T120000Z-abcdef"}
    assert [r.round_index for r in records] == [0, 1] and {r.rounds for r in records} == {2}
    assert [label for label, _, _ in shown] == [f"scipy numpy · round {i}/2" for i in (1, 2)]
    assert [done for _, done, _ in shown] == [0, 1] and shown[0][2] == pytest.approx(2.0)
    assert "== verdict 20261124T120000Z-abcdef: scipy numpy --quick -k solve (round 2/2)" in (
        tmp_path / "r.log").read_text()


@pytest.mark.slow
def test_quick_scale_end_to_end(tmp_path: Path) -> None:
    results, page = tmp_path / "verdict.jsonl", tmp_path / "verdict.md"
    done = subprocess.run([sys.executable, str(REPO / "main.py"), "verdict", "--scale", "quick", "--format",
                           "markdown", "-o", str(page), "--results", str(results)],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    records = read(results)
    assert len({r.run_id for r in records}) == 1
    assert {r.group for r in records} == set(BENCHMARK_GROUPS)
    assert {r.round_index for r in records} == {0, 1, 2}
    text = page.read_text()
    for group in BENCHMARK_GROUPS:  # no group is missing
        assert f"No {group} records" not in text
    assert "dense linear algebra: matmul" in text and "jax jit against eager" in text
    assert "Gradients agree across 6 implementations" in text and "reach the same fit" in text
