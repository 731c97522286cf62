"""`calibrate`: A/A rounds of chosen groups stored in the results store, and the gate's warnings from them."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from jax_benchmarks.report.calibration import (CALIBRATION_SUFFIX, Limit, is_calibration_run, latest_calibrations,
                                               limit_lines)
from jax_benchmarks.report.compare import resolvable_pct
from jax_benchmarks.report.envdiff import same_machine
from jax_benchmarks.store.location import open_store
from jax_benchmarks.store.record import Record
from tests.conftest import invoke
from tests.report.fixtures import ENV, XLA_NEW, XLA_OLD, record, samples, write_results, xla_rounds

CALIBRATION = "20250101T090000Z-eeeeee" + CALIBRATION_SUFFIX
OTHER_CPU = {**ENV, "cpu": "Another CPU 1"}


def test_resolvable_change_is_welch_power_at_the_rounds() -> None:
    from scipy import stats

    # spread 0.1 between rounds, 3 rounds a side: df 4, se 0.1·√(2/3): (2.776 + 0.941) · 0.0816 → +35.5 %
    expected = math.expm1((stats.t.ppf(0.975, 4) + stats.t.ppf(0.8, 4)) * 0.1 * math.sqrt(2 / 3)) * 100
    assert resolvable_pct(0.1, 3) == pytest.approx(expected, rel=1e-3)
    assert resolvable_pct(0.1, 3) == pytest.approx(35.5, abs=0.1)
    assert resolvable_pct(0.1, 10) < resolvable_pct(0.1, 3)  # more rounds resolve less


def test_latest_calibration_of_this_machine_only() -> None:
    older = xla_rounds("20250101T080000Z-ffffff" + CALIBRATION_SUFFIX, "2025-01-01T08:00:00+00:00", rounds=6)
    newer = xla_rounds(CALIBRATION, "2025-01-01T09:00:00+00:00", rounds=6)
    elsewhere = xla_rounds("20250101T095000Z-999999" + CALIBRATION_SUFFIX, "2025-01-01T09:50:00+00:00", rounds=6,
                           env=OTHER_CPU)
    plain = xla_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", rounds=6)
    found = latest_calibrations([*newer, *older, *elsewhere, *plain], ENV, same_machine)
    assert {key[1] for key in found} == {"matmul_100x100_float64", "inverse_100x100_float64", "sum_100x100_float64"}
    assert {r.run_id for rows in found.values() for r in rows} == {CALIBRATION}
    assert is_calibration_run(CALIBRATION) and not is_calibration_run(XLA_OLD)


def test_limit_lines_warn_below_what_the_machine_resolves() -> None:
    limits = [Limit("xla matmul numpy", CALIBRATION, 3, 35.5, 40, 0.0),
              Limit("xla sum numpy", CALIBRATION, 3, 4.0, 3, 0.12)]
    lines = limit_lines(limits, 10.0)
    assert lines[0] == (f"warning: --fail-on-regression 10 % is below what this machine resolves for 1 of 2 calibrated "
                        f"figure(s) (A/A calibration run {CALIBRATION}): e.g. xla matmul numpy resolves only changes of "
                        "35.5 % or more with 3 rounds a side (10 % needs 40 rounds a side); record more --rounds, "
                        "sample longer (--min-time, e.g. 1: steadier rounds on a shared host) or raise the threshold")
    assert "false alarms at 10 % in the A/A calibration for 1 of 2 calibrated figure(s)" in lines[1]
    assert "xla sum numpy in 12% of the splits" in lines[1]
    assert limit_lines([Limit("xla sum numpy", CALIBRATION, 3, 4.0, 3, 0.0)], 10.0) == []


def alternating_rounds(run_id: str, timestamp: str, log_step: float, rounds: int) -> list[Record]:
    """numpy matmul rounds whose fastest sample alternates e^-s and e^+s around 1 ms (a known spread)."""
    out = []
    for index in range(rounds):
        scale = 1e-3 * math.exp(log_step if index % 2 else -log_step)
        rec = record(run_id, timestamp, "xla", "numpy", "matmul_100x100_float64", samples(scale))
        out.append(rec.model_copy(update={"round_index": index, "rounds": rounds}))
    return out


def test_the_gate_warns_from_the_stored_calibration(results_path: Path) -> None:
    # Halves [-s, s, -s] and [s, -s, s]: spread s·√(4/3); with s = 0.1 and 3 rounds a side the gate resolves
    # 0.1155 · √(2/3) · 3.717 → +42.0 %, so 10 % is below it and 50 % is not.
    write_results(results_path, [
        *alternating_rounds(CALIBRATION, "2025-01-01T09:00:00+00:00", 0.1, 6),
        *alternating_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", 0.0, 3),
        *alternating_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", 0.0, 3),
    ])
    result = invoke("report", "--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "10")
    assert result.exit_code == 0, result.stderr
    assert (f"warning: --fail-on-regression 10 % is below what this machine resolves for 1 of 1 calibrated figure(s) "
            f"(A/A calibration run {CALIBRATION}): e.g. xla matmul_100x100_float64 numpy resolves only changes of "
            "42 % or more with 3 rounds a side") in " ".join(result.stderr.split())
    wide = invoke("report", "--results", str(results_path), "--baseline", "previous", "--fail-on-regression", "50")
    assert wide.exit_code == 0, wide.stderr
    assert "below what this machine resolves" not in wide.stderr


def test_the_gate_ignores_another_machines_calibration(results_path: Path) -> None:
    other = [r.model_copy(update={"env": OTHER_CPU})
             for r in alternating_rounds(CALIBRATION, "2025-01-01T09:00:00+00:00", 0.1, 6)]
    write_results(results_path, [*other, *alternating_rounds(XLA_OLD, "2025-01-01T10:00:00+00:00", 0.0, 3),
                                 *alternating_rounds(XLA_NEW, "2025-01-02T10:00:00+00:00", 0.0, 3)])
    result = invoke("report", "--results", str(results_path), "--baseline", XLA_OLD, "--fail-on-regression", "10")
    assert "below what this machine resolves" not in result.stderr


def fake_measure(rounds_of: Callable[[str], Sequence[Record]], seen: list[Any]) -> Callable[..., list[Any]]:
    """cli.rounds.run_steps (the one round loop) that appends `rounds_of(run_id)` to the store instead of starting
    processes."""
    from jax_benchmarks.cli.rounds import RoundDone

    def run_steps(steps: Any, rounds: int, results: Any, run_id: str, log: Path, show: Any,
                  threads: int | None = None) -> list[Any]:
        seen.append((SimpleNamespace(steps=steps, rounds=rounds), run_id, threads))
        store = open_store(results)
        try:
            for rec in rounds_of(run_id):
                store.append(rec)
        finally:
            store.close()
        return [RoundDone(f"{step.group} {step.command}", 0.1, 0) for step in steps for _ in range(rounds)]

    return run_steps


def test_calibrate_runs_rounds_prints_and_stores(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.cli.rounds as round_loop

    seen: list[Any] = []
    monkeypatch.setattr(round_loop, "run_steps", fake_measure(
        lambda run_id: xla_rounds(run_id, "2025-01-01T09:00:00+00:00", rounds=10, seed=3), seen))
    result = invoke("calibrate", "xla:numpy", "--options", "--matrix-size 100", "--rounds", "10",
                    "--fail-on-regression", "5", "--threads", "1", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    plan, run_id, threads = seen[0]
    assert is_calibration_run(run_id) and threads == 1 and plan.rounds == 10
    assert [(s.group, s.command, s.options) for s in plan.steps] == [("xla", "numpy", ("--matrix-size", "100"))]
    lines = [line for line in result.stdout.splitlines() if line.startswith("xla matmul_100x100_float64 numpy")]
    assert len(lines) == 1 and "false alarms 0 of 200 A/A splits (0.0%)" in lines[0], result.stdout
    assert "5 rounds a side detect a slowdown of" in lines[0]
    data = json.loads(invoke("report", "--results", str(results_path), "--run", run_id, "--calibrate",
                             "--format", "json").stdout)
    assert {row["run_id"] for row in data["calibration"]} == {run_id}  # the rounds stayed in the store


def test_calibrate_refuses_unknown_groups_and_commands(results_path: Path) -> None:
    for step, said in (("nope", "the group must be one of xla, jit"), ("xla:nope", "xla has the commands all")):
        result = invoke("calibrate", step, "--results", str(results_path))
        assert result.exit_code == 2 and said in result.stderr and "Traceback" not in result.stderr
    few = invoke("calibrate", "xla", "--rounds", "5", "--results", str(results_path))
    assert few.exit_code == 2 and "--rounds" in few.stderr
    assert not results_path.exists()


def test_calibrate_checks_the_verdicts_rule_a_a_and_fails_on_a_false_decision(
        results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each figure's even rounds against its odd rounds, judged as the verdict judges two frameworks: unchanged code
    is never called faster; a figure whose odd rounds ran 20 % slower (a drift the rounds line up with) is, and the
    command says so and exits 1."""
    import jax_benchmarks.cli.rounds as round_loop

    monkeypatch.setattr(round_loop, "run_steps", fake_measure(
        lambda run_id: xla_rounds(run_id, "2025-01-01T09:00:00+00:00", rounds=10, seed=3), []))
    result = invoke("calibrate", "xla:numpy", "--rounds", "10", "--margin", "5", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "verdict A/A at ±5 %: 3 figure(s), each its even rounds against its odd rounds as the verdict judges two " \
           "frameworks: 0 called faster or slower" in said

    def drifting(run_id: str) -> list[Record]:
        return [r.model_copy(update={"min_s": (r.min_s or 0.0) * (1.2 if (r.round_index or 0) % 2 else 1.0),
                                     "median_s": (r.median_s or 0.0) * (1.2 if (r.round_index or 0) % 2 else 1.0)})
                for r in xla_rounds(run_id, "2025-01-01T09:00:00+00:00", rounds=10, seed=3)]

    monkeypatch.setattr(round_loop, "run_steps", fake_measure(drifting, []))
    bad = invoke("calibrate", "xla:numpy", "--rounds", "10", "--margin", "5", "--results", str(results_path))
    assert bad.exit_code == 1
    bad_said = " ".join(bad.stderr.split())
    assert "false decision: " in bad_said and "called 3 figure(s) faster or slower than themselves (A/A)" in bad_said
    assert invoke("calibrate", "xla", "--margin", "nan", "--results", str(results_path)).exit_code == 2


def test_calibrate_whose_every_round_was_busy_judged_nothing_and_does_not_pass(
        results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rounds all taken while other programs held the cores leave the A/A check nothing to judge: exit 2 with the
    reason, never a pass (the rounds stay in the store)."""
    import jax_benchmarks.cli.rounds as round_loop

    busy = {"window_s": 0.5, "busy": True, "cores": 2, "others_cores": 1.6, "steal_cores": 0.0}
    monkeypatch.setattr(round_loop, "run_steps", fake_measure(
        lambda run_id: [r.model_copy(update={"contention": busy})
                        for r in xla_rounds(run_id, "2025-01-01T09:00:00+00:00", rounds=10, seed=3)], []))
    result = invoke("calibrate", "xla:numpy", "--rounds", "10", "--results", str(results_path))
    assert result.exit_code == 2, result.stderr
    said = " ".join(result.stderr.split())
    assert "judged nothing: no figure has 6 rounds taken on a quiet machine" in said, said
    assert "Traceback" not in result.stderr and results_path.exists()
