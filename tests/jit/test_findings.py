"""The jit findings and the report gate read `jit flax`'s training records of both shapes: one record per mode
holding every epoch after the first as samples (before it ran mnist's training cases), and one record per epoch
(param `epoch`) with the compile time on the jitted train step's record."""

from __future__ import annotations

from typing import Any

import pytest

from jax_benchmarks.jit.findings import jit_findings, jit_gains
from jax_benchmarks.report.compare import compare
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.findings import figures, latest_runs
from tests.verdict.fixtures import figure

EPOCH, STEP, VALIDATION = "train_epoch_128x28x28_float32", "train_step_128x28x28_float32", "validation_1000x28x28_float32"
OLD_RUN, NEW_RUN = "20261120T120000Z-old000", "20261126T120000Z-new000"
EPOCHS = 3


def old_shape(eager_s: float, jit_s: float, compile_s: float) -> list[Record]:
    """Per round and mode, one epoch record whose samples are the epochs after the first; jit's compile_s on it."""
    params = {"model": "cnn", "batch_size": 128, "epochs": EPOCHS}
    return (figure("jit", "flax", EPOCH, eager_s, variant="eager", run_id=OLD_RUN, params=params)
            + figure("jit", "flax", EPOCH, jit_s, variant="jit", run_id=OLD_RUN, compile_s=compile_s, params=params))


def new_shape(eager_s: float, jit_s: float, compile_s: float, *, first_epoch_x: float = 1.0) -> list[Record]:
    """Per round and mode, mnist's training cases: the step (jit's compile_s on it), then per epoch an epoch record
    timed once (the first `first_epoch_x` times the others) and its validation."""
    out: list[Record] = []
    for mode, epoch_s, compiled in (("eager", eager_s, None), ("jit", jit_s, compile_s)):
        params: dict[str, Any] = {"model": "cnn", "batch": 128, "epochs": EPOCHS}
        rounds = figure("jit", "flax", STEP, epoch_s / 30, variant=mode, run_id=NEW_RUN, compile_s=compiled,
                        params=params)
        for index, step in enumerate(rounds):
            out.append(step)
            for n in range(1, EPOCHS + 1):
                seconds = epoch_s * (first_epoch_x if n == 1 else 1.0)
                [epoch] = figure("jit", "flax", EPOCH, seconds, variant=mode, run_id=NEW_RUN, rounds=1,
                                 params={**params, "epoch": n})
                [tested] = figure("jit", "flax", VALIDATION, 0.2, variant=mode, run_id=NEW_RUN, rounds=1,
                                  params={**params, "epoch": n}, metrics={"accuracy": 0.9})
                out += [epoch.model_copy(update={"round_index": index, "rounds": 3}),
                        tested.model_copy(update={"round_index": index, "rounds": 3})]
    return out


def gain_of(records: list[Record], case: str) -> Any:
    [gain] = [g for g in jit_gains(records) if g.case == case]
    return gain


def test_the_old_shape_keeps_its_gain_and_its_compile_time() -> None:
    gain = gain_of(old_shape(0.40, 0.16, 2.0), EPOCH)
    assert gain.contrast.judged == "faster" and gain.contrast.speedup == pytest.approx(2.5, rel=0.05)
    assert gain.compile_s == pytest.approx(2.0)
    assert gain.break_even_calls == 9  # ceil(2.0 / (0.40 - 0.16))


def test_per_epoch_records_take_the_compile_time_of_the_jitted_step() -> None:
    records = new_shape(0.40, 0.16, 2.0, first_epoch_x=3.0)
    gain = gain_of(records, EPOCH)
    # A round's figure is its last epoch (as for mnist's records in the report gate): not the slower first one.
    assert gain.contrast.speedup == pytest.approx(2.5, rel=0.05) and gain.contrast.judged == "faster"
    assert gain.contrast.b_median_s == pytest.approx(0.40, rel=0.05)
    assert gain.compile_s == pytest.approx(2.0) and gain.break_even_calls == 9 and gain.call == "epoch"
    # The step is a figure of its own, its break-even in steps.
    step = gain_of(records, STEP)
    assert step.compile_s == pytest.approx(2.0) and step.call == "call"
    assert step.break_even_calls == 250  # ceil(2.0 / ((0.40 - 0.16) / 30))
    [finding] = jit_findings(records)
    assert f"At {EPOCH}: jit is 2.5" in finding.sentence and "paid back after 9 epochs" in finding.sentence
    assert "paid back after 250 calls" in finding.sentence
    epoch_row = next(row for row in finding.rows if row[0] == EPOCH)
    assert epoch_row[-2:] == ("2 s", "9") and finding.headers[-1] == "break-even calls (epochs for an epoch)"


def test_a_step_of_another_run_lends_no_compile_time() -> None:
    """The epochs of a run whose step case was not selected (-k train_epoch) paid a compile no record holds."""
    records = [r for r in new_shape(0.40, 0.16, 2.0) if r.case != STEP]
    other = [r.model_copy(update={"run_id": "20261127T000000Z-other0"}) for r in new_shape(0.40, 0.16, 5.0)
             if r.case == STEP]
    gain = gain_of(records + other, EPOCH)
    assert gain.compile_s is None and gain.break_even_calls is None


def test_old_and_new_records_read_together() -> None:
    """The verdict takes each figure from the latest run that has it; the report gate compares the new shape's rounds
    (each its last epoch) with the old shape's (each the median of its epochs)."""
    old, new = old_shape(0.40, 0.16, 2.0), new_shape(0.40, 0.20, 1.5)
    chosen = latest_runs([*old, *new])["jit"]
    assert {r.run_id for r in chosen if r.case == EPOCH} == {NEW_RUN}
    gain = gain_of(chosen, EPOCH)
    assert gain.compile_s == pytest.approx(1.5) and gain.contrast.speedup == pytest.approx(2.0, rel=0.05)
    timed = figures([*old, *new])
    key = ("jit", EPOCH, "flax", "jit", "cpu")
    current, baseline = ([r for r in timed[key] if r.run_id == run] for run in (NEW_RUN, OLD_RUN))
    comparison = compare(current, baseline)
    assert comparison is not None and comparison.rounds == comparison.baseline_rounds == 3
    assert comparison.change_pct == pytest.approx(25.0, abs=3.0)  # 0.20 s against 0.16 s an epoch


def test_the_epoch_figure_of_either_shape() -> None:
    """`jit flax`'s summary line and --plot: one epoch's typical time and spread, from per-epoch records (their median
    and IQR) or from one record holding every epoch (its own)."""
    from jax_benchmarks.jit.plot import epoch_figure

    per_epoch = [r for r in new_shape(0.40, 0.16, 2.0, first_epoch_x=3.0)
                 if r.case == EPOCH and r.variant == "eager" and r.round_index == 0]
    assert [r.params["epoch"] for r in per_epoch] == [1, 2, 3]
    seconds = [r.median_s for r in per_epoch]
    figure_s, iqr_s = epoch_figure(per_epoch) or (0.0, 0.0)
    assert figure_s == pytest.approx(sorted(seconds)[1]) and iqr_s > 0
    [old] = [r for r in old_shape(0.40, 0.16, 2.0) if r.variant == "eager" and r.round_index == 0]
    assert epoch_figure([old]) == (old.median_s, old.iqr_s)
    assert epoch_figure([]) is None
