"""The verdict's training findings compare like with like: jit with torch.compile (the headline) and eager with eager,
each from the runs of one setting, naming the pair and the runs; a side without the matching mode is said, never
replaced by an unmatched pair. Synthetic records with known answers."""

from __future__ import annotations

from jax_benchmarks.mnist.findings import VERDICT_STEPS, findings, mode_of
from jax_benchmarks.store.record import Record
from tests.verdict.fixtures import epochs

MANUAL = "20261125T090000Z-bbbbbb"


def by_key(records: list[Record]) -> dict[str, object]:
    return {f.key: f for f in findings(records, None)}


def test_an_eager_pytorch_record_is_never_compared_with_jitted_flax() -> None:
    # Records as they were before --compile: mnist flax jitted, mnist pytorch eager. No mode is matched.
    found = findings(epochs("flax", 10.0, [0.9]) + epochs("pytorch", 5.0, [0.9]), None)
    assert [(f.key, f.status) for f in found] == [("training", "missing"), ("training-eager", "missing")]
    headline = found[0]
    assert headline.sentence.startswith("The compiled pair (jit against compile:<mode>) is not compared")
    assert "PyTorch has no compile train step" in headline.sentence
    assert "no unmatched pair is compared instead" in headline.sentence
    assert "JAX (flax) has no eager train step" in found[1].sentence
    assert all("faster" not in f.sentence and "sooner" not in f.sentence for f in found)


def test_the_headline_compares_jit_with_compile_and_names_the_pair() -> None:
    records = (epochs("flax", 10.0, [0.9], mode="jit") + epochs("pytorch", 20.0, [0.9], mode="eager")
               + epochs("pytorch", 5.0, [0.9], mode="compile:default", compile_s=30.0))
    found = by_key(records)
    speed, reach = found["training"], found["time-to-accuracy"]
    assert speed.sentence.startswith("Compiled pair (jit against compile:<mode>): ")  # type: ignore[attr-defined]
    # torch.compile's step (5 s / 100) against flax's (10 s / 100): the eager PyTorch step (20 s) takes no part.
    assert "pytorch compile:default trains 2.00× faster per step than flax" in speed.sentence  # type: ignore[attr-defined]
    assert {row[0] for row in speed.rows} == {"flax", "pytorch compile:default"}  # type: ignore[attr-defined]
    assert {row[0] for row in reach.rows} == {"flax", "pytorch compile:default"}  # type: ignore[attr-defined]
    assert all(r.params["mode"] != "eager" for r in speed.records)  # type: ignore[attr-defined]
    assert found["training-eager"].status == "missing"  # type: ignore[attr-defined]


def test_a_mixed_store_never_pools_runs_of_different_settings_and_names_the_runs_taken() -> None:
    # A verdict's three rounds at batch 32, then manual runs of another batch and more epochs in the same store.
    verdict = (epochs("flax", 1.0, [0.8], mode="jit", batch=32)
               + epochs("pytorch", 0.5, [0.8], mode="compile:default", batch=32))
    manual = (epochs("flax", 30.0, [0.97, 0.98, 0.985], rounds=1, mode="jit", batch=128, run_id=MANUAL)
              + epochs("pytorch", 90.0, [0.96, 0.97, 0.98], rounds=1, mode="eager", batch=128, run_id=MANUAL))
    found = findings(verdict + manual, None)
    for finding in found:
        assert MANUAL not in finding.run_ids, finding.key
        assert {r.params["batch"] for r in finding.records} <= {32}, finding.key
        assert all("_128x" not in case for case in finding.cases), finding.key
    speed = next(f for f in found if f.key == "training")
    assert "runs of one setting: batch 32" in speed.sentence
    assert f"1 run(s) of other settings left out ({MANUAL})" in speed.sentence
    reach = next(f for f in found if f.key == "time-to-accuracy")
    assert {row[1] for row in reach.rows} == {"3 of 3"}  # the verdict's three seeds per framework, nothing else


def test_mode_of_records_written_before_the_mode_was_recorded() -> None:
    [flax, *_] = epochs("flax", 1.0, [0.9])
    [pytorch, *_] = epochs("pytorch", 1.0, [0.9])
    [compiled, *_] = epochs("pytorch", 1.0, [0.9], mode="compile:max-autotune")
    assert (mode_of(flax), mode_of(pytorch), mode_of(compiled)) == ("jit", "eager", "compile:max-autotune")


def test_every_scale_trains_compiled_pytorch_beside_the_frameworks_default_modes() -> None:
    for scale, steps in VERDICT_STEPS.items():
        commands = [(command, options) for command, options, _ in steps]
        assert [c for c, _ in commands] == ["all", "pytorch"], scale
        assert "--compile" in commands[1][1], scale
        # The same settings (the options of `all`) for the compiled run, so the pair is one setting.
        assert tuple(o for o in commands[1][1] if o != "--compile") == commands[0][1], scale
