"""The `autograd` commands: values, records, parity of `all`, the graph PNG, --help and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from src.autograd.parity import Evaluation, ParityBook, check_parity
from src.autograd.reference import SEED_DF_X1, SEED_F_X1, Points
from src.core.errors import CheckFailed
from src.core.results import Run
from tests.help_probe import probe
from tests.conftest import invoke, read_jsonl

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FAST = ("--points", "16", "--repeats", "1")


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
    result = invoke("autograd", "numpy", *FAST, "--dtype", "float64", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    assert f"f(3.0) = {SEED_F_X1:.7f}" in result.stdout
    assert f"f′(3.0) = {SEED_DF_X1:.7f}" in result.stdout
    assert "linspace(0, 4π, 20)" in result.stdout
    records = read_jsonl(results_path)
    assert [(r["backend"], r["variant"]) for r in records] == [("numpy", "loop"), ("numpy", "vectorised")]
    for record in records:
        assert record["case"] == "grad_16_float64" and record["dtype"] == "float64"
        assert record["checks"]["f_x1"] == pytest.approx(SEED_F_X1, abs=5e-8)
        assert record["checks"]["df_x1"] == pytest.approx(SEED_DF_X1, abs=5e-8)
        assert record["checks"]["max_abs_err_df"] < 1e-12
        assert record["median_s"] > 0 and record["repeats"] >= 1
    assert not (Path("data/plots")).exists()  # no --plot-graph, no file


def test_all_backends_agree_and_the_graph_png_is_written(results_path: Path) -> None:
    records = run_json("autograd", "all", *FAST, "--plot-graph", "--results", str(results_path))
    timed = [r for r in records if r["backend"] != "parity"]
    assert {(r["backend"], r["variant"]) for r in timed} == {
        ("jax", "vmap"), ("jax", "vmap+jit"), ("pytorch", "loop"), ("pytorch", "vmap"),
        ("numpy", "loop"), ("numpy", "vectorised"),
    }
    assert all(r["case"] == "grad_16_float32" and r["median_s"] > 0 for r in timed)
    assert next(r for r in timed if r["variant"] == "vmap+jit")["compile_s"] is not None
    (parity,) = [r for r in records if r["backend"] == "parity"]
    assert parity["checks"]["passed"] is True
    assert 0 <= parity["checks"]["max_abs_diff_df"] <= parity["checks"]["tolerance"] == 1e-5
    assert len(parity["params"]["compared"]) == 6
    assert len(read_jsonl(results_path)) == len(records)  # the file holds what --json printed

    png = Path("data/plots/autograd_engine_graph_grad_16_float32.png")
    assert png.read_bytes()[:8] == PNG_MAGIC
    with Image.open(png) as image:
        assert image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100


def test_a_single_backend_records_no_parity(results_path: Path) -> None:
    records = run_json("autograd", "jax", *FAST, "--dtype", "float64", "--results", str(results_path))
    assert [r["variant"] for r in records] == ["vmap", "vmap+jit"]
    assert all(r["checks"]["max_abs_err_df"] < 1e-12 for r in records)  # x64 really was on


def _evaluation(backend: str, points: Points, shift: float) -> Evaluation:
    f = np.zeros(points.shown.size)
    df = np.full(points.shown.size + points.timed.size, shift)
    return Evaluation(backend, f"{backend} x @cpu", "cpu", points, f, df)


def test_parity_records_first_then_fails_when_backends_disagree(results_path: Path) -> None:
    points = Points.make("float32", 8)
    book = ParityBook()
    run = Run("autograd", results_path)
    book.add(run.run_id, _evaluation("jax", points, 0.0))
    book.add(run.run_id, _evaluation("numpy", points, 3e-4))
    shown: list[str] = []
    with pytest.raises(CheckFailed, match="disagree"):
        check_parity(run, shown.append, book)
    (record,) = read_jsonl(results_path)
    assert record["checks"]["passed"] is False
    assert record["checks"]["max_abs_diff_df"] == pytest.approx(3e-4)
    assert "values differ" in shown[0]
    assert book.take(run.run_id) == []  # consumed


def test_parity_passes_within_tolerance(results_path: Path) -> None:
    points = Points.make("float64", 8)
    book = ParityBook()
    run = Run("autograd", results_path)
    book.add(run.run_id, _evaluation("jax", points, 0.0))
    book.add(run.run_id, _evaluation("pytorch", points, 1e-12))
    record = check_parity(run, lambda _: None, book)
    assert record is not None and record.checks["passed"] is True
