"""The `autograd` commands: values, records, the agreement of `all`, the graph PNG, --help and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from jax_benchmarks.autograd.cases import AGREEMENT, record_gradient_agreement
from jax_benchmarks.autograd.reference import EXPECTED_DF_X1, EXPECTED_F_X1, Points, df_exact, f_exact
from jax_benchmarks.measure.agreement import Computed
from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.store.record import Output
from jax_benchmarks.run import Run
from tests.help_probe import probe
from tests.conftest import invoke, read_jsonl

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FAST = ("--points", "16", "--repeats", "1")
CNN_FAST = ("--cnn-batch", "8")  # the mnist CNN's train step on 8 images (every backend and all take it)


def run_json(*args: str) -> list[dict[str, Any]]:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stderr + result.stdout
    records: list[dict[str, Any]] = json.loads(result.stdout)
    return records


@pytest.mark.parametrize("args", [["autograd"], ["autograd", "all"], ["autograd", "numpy"]])
def test_help_imports_no_framework(args: list[str]) -> None:
    result = probe(args)
    assert result["code"] == 0 and result["heavy"] == [], result
    assert "plot-graph" in str(result["help"]) or "numpy" in str(result["help"])


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["autograd", "numpy", "--points", "1"], "--points"),
        (["autograd", "jax", "--points", "1000001"], "--points"),
        (["autograd", "pytorch", "--dtype", "float16"], "--dtype"),
        (["autograd", "jax", "--plot-graph"], "--plot-graph"),  # only the engine draws its graph
        (["autograd", "tensorflow"], "BACKEND"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], option: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2
    assert option in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_numpy_backend_prints_and_records_the_reference_values(results_path: Path) -> None:
    result = invoke("autograd", "numpy", *FAST, *CNN_FAST, "--dtype", "float64", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    assert f"f(3.0) = {EXPECTED_F_X1:.7f}" in result.stdout
    assert f"f′(3.0) = {EXPECTED_DF_X1:.7f}" in result.stdout
    assert "linspace(0, 4π, 20)" in result.stdout
    records = read_jsonl(results_path)
    assert [(r["backend"], r["variant"]) for r in records] == [
        ("numpy", "loop"), ("numpy", "vectorised"), ("numpy", "train step")]
    cnn = records.pop()
    assert cnn["case"] == "cnn_train_step_8x28x28_float64" and cnn["metrics"]["images_per_s"] > 0
    assert cnn["checks"]["loss_after"] < cnn["checks"]["loss_before"]
    for record in records:
        assert record["case"] == "grad_16_float64" and record["dtype"] == "float64"
        assert record["checks"]["f_x1"] == pytest.approx(EXPECTED_F_X1, abs=5e-8)
        assert record["checks"]["df_x1"] == pytest.approx(EXPECTED_DF_X1, abs=5e-8)
        assert record["checks"]["max_abs_err_df"] < 1e-12
        assert record["median_s"] > 0 and record["repeats"] >= 1
    assert not (Path("data/plots")).exists()  # no --plot-graph, no file


def test_all_backends_agree_and_the_graph_png_is_written(results_path: Path) -> None:
    records = run_json("autograd", "all", *FAST, *CNN_FAST, "--plot-graph", "--results", str(results_path))
    timed = [r for r in records if r["backend"] != "all"]
    assert {(r["backend"], r["variant"]) for r in timed} == {
        ("jax", "vmap"), ("jax", "vmap+jit"), ("pytorch", "loop"), ("pytorch", "vmap"), ("pytorch", "backward(sum)"),
        ("numpy", "loop"), ("numpy", "vectorised"), ("pytorch", "train step"), ("numpy", "train step"),
        ("jax", "train step"),
    }
    cnn = [r for r in timed if r["variant"] == "train step"]
    assert {r["case"] for r in cnn} == {"cnn_train_step_8x28x28_float32"}  # one row: the same model in all three
    # Flax's step is jitted: its compile is apart from the timed steps; PyTorch eager and the engine compile nothing
    assert {r["backend"]: r["compile_s"] is not None for r in cnn} == {"jax": True, "pytorch": False, "numpy": False}
    assert all(r["metrics"]["images_per_s"] > 0 and r["checks"]["loss_after"] < r["checks"]["loss_before"]
               for r in cnn)
    timed = [r for r in timed if r not in cnn]
    assert all(r["case"] == "grad_16_float32" and r["median_s"] > 0 for r in timed)
    assert next(r for r in timed if r["variant"] == "vmap+jit")["compile_s"] is not None
    (agreement,) = [r for r in records if r["backend"] == "all"]
    assert agreement["case"] == "agreement_grad_16_float32" and agreement["checks"]["passed"] is True
    assert 0 <= agreement["checks"]["max_abs_diff_df"] <= agreement["checks"]["tolerance"] == 1e-5
    assert len(agreement["params"]["compared"]) == 7  # PyTorch's backward(sum) among them
    assert len(read_jsonl(results_path)) == len(records)  # the file holds what --json printed

    png = Path("data/plots/autograd_engine_graph_grad_16_float32.png")
    assert png.read_bytes()[:8] == PNG_MAGIC
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100


def test_a_single_backend_records_no_agreement(results_path: Path) -> None:
    # The gradient cases alone; the CNN's float64 step: its in-process twin in tests/autograd/test_cnn.py, and the
    # e2e run below (a Flax compile of the full model in float64, tens of seconds on a busy 2-core machine).
    records = run_json("autograd", "jax", *FAST, "-k", "grad", "--dtype", "float64", "--results", str(results_path))
    assert [r["variant"] for r in records] == ["vmap", "vmap+jit"]
    assert all(r["checks"]["max_abs_err_df"] < 1e-12 for r in records)  # x64 really was on


# twin: test_a_single_backend_records_no_agreement (the gradient cases) and
# tests/autograd/test_cnn.py::test_flaxs_cnn_trains_in_float64_under_the_suites_x64 (the CNN's step, in process)
@pytest.mark.e2e
def test_a_single_backend_with_its_cnn_records_no_agreement(results_path: Path) -> None:
    records = run_json("autograd", "jax", *FAST, *CNN_FAST, "--dtype", "float64", "--results", str(results_path))
    assert [r["variant"] for r in records] == ["vmap", "vmap+jit", "train step"]
    cnn = records.pop()
    assert all(r["checks"]["max_abs_err_df"] < 1e-12 for r in records)  # x64 really was on
    # Flax trains the mnist CNN in float64 too (x64 on for the whole suite): the loss falls on its batch
    assert cnn["case"] == "cnn_train_step_8x28x28_float64" and cnn["dtype"] == "float64"
    assert cnn["checks"]["loss_after"] < cnn["checks"]["loss_before"] and cnn["metrics"]["images_per_s"] > 0


def judged(run: Run, backend: str, points: Points, shift: float) -> None:
    """What the harness leaves on the run for one gradient case: its record and, next to it, its values
    (the exact ones, f′ shifted by `shift`)."""
    record = run.record(backend=backend, case=points.case, variant="x", device="cpu", dtype=points.dtype)
    df_all = df_exact(np.concatenate([points.shown, points.timed])) + shift
    run.outputs.append(Output(record, Computed(AGREEMENT, {"f": f_exact(points.shown), "df": df_all})))


def test_the_agreement_records_first_then_fails_when_backends_disagree(results_path: Path) -> None:
    points = Points.make("float32", 8)
    shown: list[str] = []
    run = Run("autograd", results_path, log=shown.append)
    judged(run, "jax", points, 0.0)
    judged(run, "numpy", points, 3e-4)
    with pytest.raises(CheckFailed, match="backends disagree: largest disagreement \\(absolute\\) f 0"):
        record_gradient_agreement(run)
    agreement = read_jsonl(results_path)[-1]
    assert agreement["backend"] == "all" and agreement["case"] == "agreement_grad_8_float32"
    assert agreement["checks"]["passed"] is False
    assert agreement["checks"]["max_abs_diff_f"] == 0.0
    assert agreement["checks"]["max_abs_diff_df"] == pytest.approx(3e-4)
    assert agreement["checks"]["df_pair"] == "jax x @cpu vs numpy x @cpu"
    assert agreement["params"] == {"compared": ["jax x @cpu", "numpy x @cpu"], "points": 8 + 21}
    assert "DISAGREE" in shown[-1]


def test_the_agreement_passes_within_tolerance_and_needs_two_backends(results_path: Path) -> None:
    points = Points.make("float64", 8)
    run = Run("autograd", results_path)
    judged(run, "jax", points, 0.0)
    judged(run, "jax", points, 2e-11)
    assert record_gradient_agreement(run) is None  # one backend: nothing to compare across
    judged(run, "pytorch", points, 1e-12)
    agreement = record_gradient_agreement(run)
    assert agreement is not None and agreement.passed
    assert run.records[-1].checks["max_abs_diff_df"] == pytest.approx(2e-11)
    assert len(agreement.labels) == 3


def test_k_selects_variants_and_the_agreement_compares_only_what_ran(results_path: Path) -> None:
    """`-k "[vmap]"` selects the vmap variant of jax and pytorch (not vmap+jit) and no numpy case."""
    # On the CPU on any machine: the labels below name the device
    result = invoke("autograd", "all", *FAST, "--device", "cpu", "-k", "[vmap]", "--json", "--results",
                    str(results_path))
    assert result.exit_code == 0, result.stderr + result.stdout
    records = json.loads(result.stdout)
    assert [(r["backend"], r["variant"]) for r in records] == [("jax", "vmap"), ("pytorch", "vmap"), ("all", None)]
    assert records[-1]["params"]["compared"] == ["jax vmap @cpu", "pytorch vmap @cpu"]
    # the values are printed by every case that ran
    assert result.stderr.count("f(3.0) = ") == 2 and "numpy loop @cpu" not in result.stderr
    # numpy's unselected cases: one line, not one a case
    assert re.search(r"skipped: numpy: (\d+) of \1 case\(s\) not selected by -k \[vmap\]", result.stderr)
    assert "grad_16_float32 [loop]" not in result.stderr


def test_suites_are_declared_without_computing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the suites names every case (a `list` command prints them) but makes no points and
    calls no gradient."""
    from jax_benchmarks.autograd import cnn, jax_backend, numpy_backend, pytorch_backend, reference
    from jax_benchmarks.autograd.settings import AllSettings

    def no_points(*_: object) -> Points:
        raise AssertionError("points were made while declaring the suites")

    def no_digits() -> None:
        raise AssertionError("the mnist data were loaded while declaring the suites")

    monkeypatch.setattr(reference.Points, "make", classmethod(no_points))
    monkeypatch.setattr(cnn.MnistSubset, "load", staticmethod(no_digits))
    settings = AllSettings(points=32, dtype="float64", device="cpu")
    declared = {
        module.__name__.rsplit(".", 1)[-1]: [(s.target.backend, s.target.device, [c.label for c in s.cases])
                                             for s in module.suites(settings)]
        for module in (jax_backend, pytorch_backend, numpy_backend)
    }
    assert declared == {
        "jax_backend": [("jax", "cpu", ["grad_32_float64 [vmap]", "grad_32_float64 [vmap+jit]"]),
                        ("jax", "cpu", ["cnn_train_step_128x28x28_float64 [train step]"])],
        "pytorch_backend": [("pytorch", "cpu", ["grad_32_float64 [loop]", "grad_32_float64 [vmap]",
                                                "grad_32_float64 [backward(sum)]"]),
                            ("pytorch", "cpu", ["cnn_train_step_128x28x28_float64 [train step]"])],
        "numpy_backend": [("numpy", "cpu", ["grad_32_float64 [loop]", "grad_32_float64 [vectorised]"]),
                          ("numpy", "cpu", ["cnn_train_step_128x28x28_float64 [train step]"])],
    }
    jax_suite, flax_cnn = jax_backend.suites(settings)
    assert [c.compiled for c in jax_suite.cases] == [False, True]
    # Flax's step is jitted: its first call's compile is recorded apart, and the kernels XLA:CPU runs its
    # convolutions on are part of the record
    assert [c.compiled for c in flax_cnn.cases] == [True]
    assert flax_cnn.cases[0].params["xla_cpu_conv"] in {"xla", "ynnpack"}
    assert all(c.params == {"points": 32, "x": "linspace(0, 10π, N)"} for c in jax_suite.cases)
