"""Like with like: a comparison is one case measured by each framework, and two figures whose records differ in
dtype, precision policy, batch, model, device or sync are refused, naming what differs."""

from __future__ import annotations

from jax_benchmarks.mnist.findings import training_findings
from jax_benchmarks.store.record import Record
from jax_benchmarks.verdict.answer import answers
from jax_benchmarks.verdict.findings import all_findings, contrasts, latest_runs, memory_findings, unlike
from jax_benchmarks.xla.findings import linear_algebra

from tests.verdict.fixtures import ENV, epochs, figure

CASE = "matmul_1000x1000_float64"


def changed(records: list[Record], **update: object) -> list[Record]:
    return [r.model_copy(update=update) for r in records]


def test_records_of_another_dtype_are_refused_naming_what_differs() -> None:
    jax, numpy = figure("xla", "jax", CASE, 0.005), changed(figure("xla", "numpy", CASE, 0.010), dtype="float64")
    [contrast] = contrasts([("jax", jax, "numpy", numpy)])
    assert contrast.decision.refused and contrast.judged == "undecided"
    assert contrast.phrase() == "jax against numpy: not compared: they differ in dtype (float32 vs float64)"
    [finding] = linear_algebra(jax + numpy)
    assert "not compared: they differ in dtype (float32 vs float64)" in finding.sentence
    assert "faster" not in finding.sentence and finding.status == "not compared"


def test_a_gpu_precision_policy_batch_model_or_device_that_differs_is_named() -> None:
    on_gpu = {"device": "cuda:0"}
    tf32 = changed(figure("xla", "jax", CASE, 0.005, env={**ENV, "precision": "tf32"}), **on_gpu)
    ieee = changed(figure("xla", "pytorch", CASE, 0.010), **on_gpu)
    assert unlike(tf32, ieee) == "they differ in precision policy (tf32 vs float32)"
    # On a CPU float32 is IEEE whatever the policy says: nothing to differ in.
    assert unlike(figure("xla", "jax", CASE, 0.005, env={**ENV, "precision": "tf32"}),
                  figure("xla", "pytorch", CASE, 0.010)) is None
    small = figure("autograd", "numpy", "cnn_train_step_float32", 1.0, params={"batch": 32, "model": "cnn"})
    large = figure("autograd", "pytorch", "cnn_train_step_float32", 1.0, params={"batch": 64, "model": "mlp"})
    assert unlike(small, large) == "they differ in batch (32 vs 64), model (cnn vs mlp)"
    assert unlike(figure("xla", "jax", CASE, 0.005), changed(figure("xla", "numpy", CASE, 0.005),
                                                             device="cuda:0")) == "they differ in device (cpu vs cuda:0)"


def test_two_different_cases_are_never_compared() -> None:
    a, b = figure("xla", "jax", CASE, 0.005), figure("xla", "numpy", "matmul_300x300_float64", 0.001)
    [contrast] = contrasts([("jax", a, "numpy", b)])
    assert contrast.decision.refused
    assert "case (matmul_1000x1000_float64 vs matmul_300x300_float64)" in contrast.phrase()
    # Every comparison the page makes (its answers) sets records of one case against records of the same case.
    records = (figure("xla", "jax", CASE, 0.005) + figure("xla", "numpy", CASE, 0.010)
               + figure("xla", "numpy", "matmul_2000x2000_float64", 0.08) + epochs("flax", 10.0, [0.9], mode="jit")
               + epochs("pytorch", 12.0, [0.9], mode="compile:default"))
    found = answers(all_findings(latest_runs(records)))
    assert found
    for answer in found:
        assert {r.case for r in (*answer.contrast.a_records, *answer.contrast.b_records)} == {answer.case}


def test_training_compares_the_one_case_both_frameworks_measured() -> None:
    flax = epochs("flax", 10.0, [0.95])
    pytorch = epochs("pytorch", 20.0, [0.97])
    # PyTorch also measured a smaller batch, Flax did not: that case is never set against Flax's.
    pytorch += changed(figure("mnist", "pytorch", "train_step_64x28x28_float32", 0.01), params={"train_batch_size": 64})
    [finding] = training_findings(flax + pytorch)
    assert finding.cases[0] == "train_step_128x28x28_float32"
    assert "the same CNN and batch (train_step_128x28x28_float32), flax trains 2.00× faster" in finding.sentence
    only_apart = training_findings(epochs("flax", 10.0, [0.95])[:3] + changed(
        figure("mnist", "pytorch", "train_step_64x28x28_float32", 0.01), params={"train_batch_size": 64}))
    assert only_apart[0].status == "measured" and "faster" not in only_apart[0].sentence


def test_memory_is_compared_per_case_never_each_frameworks_largest() -> None:
    def peak(records: list[Record], mib: float) -> list[Record]:
        return changed(records, memory={"host_peak_bytes": mib * 2**20})

    mnist = (peak(figure("mnist", "flax", "train_step_128x28x28_float32", 0.1), 40.0)
             + peak(figure("mnist", "pytorch", "train_step_128x28x28_float32", 0.1), 30.0)
             + peak(figure("mnist", "pytorch", "validation_1000x28x28_float32", 0.1), 364.0))
    xla = (peak(figure("xla", "numpy", CASE, 0.01), 23.9) + peak(figure("xla", "jax", CASE, 0.01), 16.0)
           + peak(figure("xla", "pytorch", CASE, 0.01), 20.0) + peak(figure("xla", "jax", "uniform_2x1000x1000_float64",
                                                                            0.01), 15.3))
    train, product = memory_findings({"mnist": mnist, "xla": xla})
    assert train.key == "memory-mnist" and train.cases == ("train_step_128x28x28_float32",)
    assert train.sentence.startswith("Host memory peak of train_step_128x28x28_float32: pytorch 30.0 MiB, flax 40.0 MiB")
    assert "364" not in train.sentence
    assert product.cases == (CASE,) and "jax 16.0 MiB, pytorch 20.0 MiB, numpy 23.9 MiB" in product.sentence
    assert "15.3" not in product.sentence
