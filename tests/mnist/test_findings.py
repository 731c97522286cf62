"""The mnist group's time-to-accuracy finding on synthetic records with known answers: the target each scale
reaches, the MLPerf score over seeds, the compile included, and the epochs after which JAX's compile pays."""

from __future__ import annotations

import pytest

from jax_benchmarks.mnist.findings import (FULL_MNIST_TARGET, VERDICT_STEPS, accuracy_finding, break_even_epochs,
                                           findings, mlperf_score, seed_runs)
from jax_benchmarks.verdict.findings import ROUND_INDEX
from jax_benchmarks.verdict.scale import SCALES, round_options
from tests.verdict.fixtures import epochs


def test_time_to_accuracy_sums_compile_and_the_epochs_up_to_the_first_that_reaches_the_target() -> None:
    [run, *_] = seed_runs(epochs("flax", 10.0, [0.95, 0.985, 0.99], compile_s=2.0))
    assert run.seconds_to(0.98) == pytest.approx(2.0 + 20.0)
    assert run.epochs_to(0.98) == 2 and run.seconds_to(0.999) is None
    # 2 epochs of 12,800 images in 22 s, compile included.
    assert run.images_per_s_to(0.98) == pytest.approx(25_600 / 22.0)


def test_an_eager_steps_first_call_is_its_one_off_cost_as_a_compile_is_a_compiled_ones() -> None:
    """A fresh process pays once before an eager step runs at speed (cuDNN's search for convolution algorithms,
    CUDA's lazy set-up: PyTorch's first call on the H200 took 0.65 s against 2.85 ms a step): the time to accuracy
    counts it, as it counts JAX's compile, and the break-even sets the two one-off costs against each other."""
    first_call = {"first_call_s": 0.65 + 0.2}  # the step's median is 20 s / 100 = 0.2 s (the fixture's)
    eager = [r.model_copy(update={"metrics": {**r.metrics, **first_call}}) if r.case.startswith("train_step_") else r
             for r in epochs("pytorch", 20.0, [0.95, 0.985])]
    [run, *_] = seed_runs(eager)
    assert not run.compiled and run.one_off_s == pytest.approx(0.65)
    assert run.seconds_to(0.98) == pytest.approx(0.65 + 40.0)
    finding = accuracy_finding(epochs("flax", 10.0, [0.95, 0.985], compile_s=2.0) + eager, 0.98)
    rows = {row[0]: row for row in finding.rows}
    assert rows["pytorch"][3] == "40.6 s" and rows["pytorch"][7] == "650 ms (first call)"
    assert rows["flax"][3] == "22 s" and rows["flax"][7] == "2 s (compile)"
    # (2 - 0.65) / (20 - 10) = 0.135 (0.13 in two digits) epochs, not 0.2 as against an eager step costing nothing.
    assert ("flax's compile is paid back against pytorch after 0.13 epochs (compile 2 s, epoch 10 s against first "
            "call 650 ms, epoch 20 s)") in finding.sentence
    # Records without first_call_s (written before it was recorded): nothing is added.
    [bare, *_] = seed_runs(epochs("pytorch", 20.0, [0.95, 0.985]))
    assert bare.one_off_s == 0.0 and bare.seconds_to(0.98) == pytest.approx(40.0)


def test_quick_and_standard_get_a_target_every_seed_reaches() -> None:
    # One short epoch, as the quick and standard scales train it: no run comes near 98 %; the seeds differ.
    records = (epochs("flax", [3.5, 3.6, 3.4], [[0.941], [0.93], [0.952]], compile_s=1.8)
               + epochs("pytorch", [3.3, 3.2, 3.4], [[0.905], [0.912], [0.918]]))
    finding = accuracy_finding(records)
    assert finding.status == "measured"
    # The lowest best accuracy (90.5 %) rounded down to a whole percent: every seed of both reaches 90 %.
    assert finding.sentence.startswith("Time to 90% test accuracy (the lowest best test accuracy of any framework "
                                       "and run, 90.5%, rounded down")
    rows = {row[0]: row for row in finding.rows}
    assert rows["pytorch"][1] == "3 of 3" and rows["flax"][1] == "3 of 3"
    # With three seeds the MLPerf score (drop the fastest and slowest) is the median: 3.3 s; flax 1.8 + 3.5 s.
    assert rows["pytorch"][2] == "3" and rows["pytorch"][3] == "3.3 s" and rows["flax"][3] == "5.3 s"
    assert rows["pytorch"][4] == "3.2 s–3.4 s" and "pytorch 3.3 s (3 of 3 seed(s), 3.2 s–3.4 s)" in finding.sentence
    assert "pytorch reaches it 1.61× sooner than flax" in finding.sentence
    assert "flax's compile is never paid back against pytorch: its epochs are not faster" in finding.sentence


def test_full_mnist_is_judged_at_99_percent_and_a_seed_that_misses_it_is_counted() -> None:
    records = (epochs("flax", 60.0, [[0.985, 0.991, 0.992], [0.986, 0.989, 0.990], [0.984, 0.990, 0.991]],
                      compile_s=3.0, full_mnist=True)
               + epochs("pytorch", 80.0, [[0.985, 0.990, 0.991], [0.983, 0.987, 0.989], [0.982, 0.986, 0.988]],
                        full_mnist=True))
    finding = accuracy_finding(records)
    assert FULL_MNIST_TARGET == 0.99 and "Time to 99% test accuracy (99 % on full MNIST)" in finding.sentence
    rows = {row[0]: row for row in finding.rows}
    # flax: seeds 0 and 2 reach 99 % at epoch 2 (123 s), seed 1 at epoch 3 (183 s): the score of 3 is the median.
    assert rows["flax"][1] == "3 of 3" and rows["flax"][3] == "123 s" and rows["flax"][5] == "2, 3"
    assert rows["pytorch"][1] == "1 of 3" and rows["pytorch"][3] == "160 s" and rows["pytorch"][7] == "—"
    # flax's 3 s compile against 20 s saved an epoch: paid back within the first epoch (0.15 epochs).
    assert "flax's compile is paid back against pytorch after 0.15 epochs" in finding.sentence


def test_a_framework_that_never_reaches_the_given_target_says_its_best() -> None:
    records = epochs("flax", 10.0, [0.95, 0.985]) + epochs("pytorch", 20.0, [0.97, 0.975])
    finding = accuracy_finding(records, 0.98)
    assert "(given with --target-accuracy)" in finding.sentence
    assert "not reached by pytorch (best 97.5%)" in finding.sentence
    assert {row[0]: row[1] for row in finding.rows} == {"flax": "3 of 3", "pytorch": "0 of 3"}


def test_rounds_of_one_seed_are_not_called_seeds() -> None:
    # Records taken before each verdict round had its own seed: three rounds, all seed 0.
    records = [r.model_copy(update={"params": {**r.params, "seed": 0}}) for r in epochs("flax", 10.0, [0.95])]
    finding = accuracy_finding(records)
    assert "flax 10 s (3 of 3 runs, 1 seed(s), " in finding.sentence and finding.rows[0][2] == "1"


def test_runs_no_better_than_chance_get_no_target() -> None:
    # One dry-run epoch of 3 steps: 8.7 % at best for one seed, what guessing gives; no target is derived from it.
    records = epochs("flax", 1.0, [[0.087], [0.22], [0.27]]) + epochs("pytorch", 2.0, [[0.16], [0.2], [0.25]])
    finding = accuracy_finding(records)
    assert finding.status == "undecided"
    assert "a run's best test accuracy is 8.7%, no better than chance (10%): no target is set" in finding.sentence
    assert accuracy_finding(records, 0.2).status == "measured"  # a target given is measured to, whatever it is


def test_records_without_a_validation_say_so_in_one_line() -> None:
    records = [r for r in epochs("flax", 10.0, [0.95], mode="jit") + epochs("pytorch", 9.0, [0.95],
                                                                             mode="compile:default")
               if not r.case.startswith("validation_")]
    finding = accuracy_finding(records)
    assert finding.status == "missing" and "no validated epoch" in finding.sentence
    # The compiled pair's two findings, then the eager pair's one: mnist's Flax step is never eager.
    assert [f.key for f in findings(records, None)] == ["training", "time-to-accuracy", "training-eager",
                                                         "accuracy-check"]


def test_time_to_accuracy_reads_the_test_accuracy_of_the_validations_never_the_epochs_training_accuracy() -> None:
    # The epochs' training accuracy reaches 99 % at once; the validations' test accuracy only at epoch 3.
    records = [r.model_copy(update={"metrics": {**r.metrics, "accuracy": 0.995}})
               if r.case.startswith("train_epoch_") else r for r in epochs("flax", 10.0, [0.95, 0.97, 0.99])]
    [run, *_] = seed_runs(records)
    assert run.best == 0.99 and run.epochs_to(0.99) == 3 and run.seconds_to(0.99) == pytest.approx(30.0)
    finding = accuracy_finding(records, 0.99)
    assert "flax 30 s" in finding.sentence and {row[0]: row[-1] for row in finding.rows} == {"flax": "99.0%"}


def test_break_even_and_mlperf_score_known_answers() -> None:
    # 2 s of compile, 0.5 s saved per epoch: even after 4 epochs (2 + 4 × 3 = 14 = 4 × 3.5).
    assert break_even_epochs(2.0, 3.0, 0.0, 3.5) == pytest.approx(4.0)
    assert break_even_epochs(2.0, 3.5, 0.0, 3.0) is None  # slower epochs never pay the compile back
    assert break_even_epochs(0.0, 3.0, 0.0, 3.5) == 0.0  # nothing to pay back
    assert mlperf_score([5.0, 1.0, 3.0, 4.0, 100.0]) == pytest.approx(4.0)  # mean of 3, 4, 5
    assert mlperf_score([2.0, 4.0]) == pytest.approx(3.0)


def test_every_scale_trains_one_seed_per_round() -> None:
    for scale in ("quick", "standard", "full"):
        for _command, options, _ in VERDICT_STEPS[scale]:
            assert options[-2:] == ("--seed", ROUND_INDEX)
        for step in (s for s in SCALES[scale].steps if s.group == "mnist"):
            seeds = [round_options(step, i) for i in range(SCALES[scale].rounds)]
            assert [argv[argv.index("--seed") + 1] for argv in seeds] == [str(i) for i in range(SCALES[scale].rounds)]
