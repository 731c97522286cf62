"""`python main.py scipy ...`: each backend, `all`, bad input, lazy --help."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from tests.help_probe import probe
from tests.conftest import invoke, read_jsonl

# Long enough for the recovery check to hold with the default seed (slope 1.52, offset 2.84).
LENGTH = "1000"


def _run(*args: str, results: Path) -> tuple[Result, list[dict[str, Any]]]:
    result = invoke("scipy", *args, "--array-length", LENGTH, "--repeats", "1", "--min-time", "0.01",
                    "--device", "cpu", "--results", str(results))
    assert result.exit_code == 0, result.stderr + result.stdout
    return result, read_jsonl(results)


def _by_case(records: list[dict[str, Any]], backend: str, op: str) -> dict[str, Any]:
    (record,) = [r for r in records if r["backend"] == backend and r["case"] == f"{op}_{LENGTH}_float64"]
    return record


# JAX compiles its solve on every run (seconds here): run `scipy jax` and `scipy all` once per module.
@pytest.fixture(scope="module")
def jax_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    return _run("jax", results=tmp_path_factory.mktemp("jax") / "results.jsonl")[1]


@pytest.fixture(scope="module")
def all_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, list[dict[str, Any]]]:
    return _run("all", results=tmp_path_factory.mktemp("all") / "results.jsonl")


def _check_recovered(records: list[dict[str, Any]], backend: str, method: str) -> None:
    solve = _by_case(records, backend, "solve")
    assert solve["metrics"]["method"] == method
    assert solve["dtype"] == "float64"
    assert abs(solve["metrics"]["slope"] / 1.5 - 1) <= 0.05
    assert abs(solve["metrics"]["offset"] / 3 - 1) <= 0.10
    assert solve["checks"]["recovered"] is True
    # Converged to the closed-form minimiser, not merely near (1.5, 3).
    assert solve["checks"]["gap_to_exact"] < 1e-4
    assert solve["metrics"]["function_evals"] >= solve["metrics"]["iterations"] > 0
    assert solve["median_s"] > 0 and solve["metrics"]["first_call_s"] > 0
    loss = _by_case(records, backend, "loss_eval")
    assert loss["median_s"] > 0 and loss["repeats"] >= 1


@pytest.mark.parametrize(("backend", "method"), [("numpy", "BFGS"), ("pytorch", "L-BFGS")])
def test_backend_recovers_the_calibration(backend: str, method: str, results_path: Path) -> None:
    _check_recovered(_run(backend, results=results_path)[1], backend, method)


def test_jax_recovers_the_calibration(jax_records: list[dict[str, Any]]) -> None:
    _check_recovered(jax_records, "jax", "BFGS")


def test_jax_compiles_once_per_shape(jax_records: list[dict[str, Any]]) -> None:
    import jax.numpy as jnp

    loss = _by_case(jax_records, "jax", "loss_eval")
    metrics = loss["metrics"]
    assert metrics["calls"] > 2
    assert metrics["compiles_same_shape"] == 1  # many calls, one compilation
    assert loss["checks"] == {"one_compile_for_same_shape": True}
    assert loss["compile_s"] is not None and loss["compile_s"] > 0
    # The same jitted loss on half the samples: its own case, timed by the harness, compiled again once.
    (new_shape,) = [r for r in jax_records if r["case"] == f"loss_eval_{int(LENGTH) // 2}_float64"]
    assert new_shape["params"]["input_length"] == int(LENGTH) // 2
    assert new_shape["params"]["array_length"] == int(LENGTH)
    assert new_shape["metrics"]["calls"] > 2 and new_shape["metrics"]["recompiles_new_shape"] == 1
    assert new_shape["metrics"]["jit_cache_entries"] == 2
    assert new_shape["checks"] == {"new_shape_compiles_again": True}
    assert new_shape["compile_s"] is not None and new_shape["compile_s"] > 0
    assert _by_case(jax_records, "jax", "solve")["compile_s"] > 0
    # float64 was enabled only inside the backend: nothing leaks into other groups.
    assert jnp.ones(1).dtype == jnp.float32


def test_jax_new_shape_case_alone_still_counts_one_compilation(results_path: Path) -> None:
    result = invoke("scipy", "jax", "--array-length", "40", "--repeats", "1", "--min-time", "0.01", "--device", "cpu",
                    "-k", "loss_eval_20_*", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    (record,) = read_jsonl(results_path)
    assert record["case"] == "loss_eval_20_float64"
    assert record["metrics"]["recompiles_new_shape"] == 1 and record["metrics"]["jit_cache_entries"] == 1


def test_jax_cache_size_and_traces_count_compilations() -> None:
    import jax.numpy as jnp

    from jax_benchmarks.frameworks.typed import jit_cache_size as cache_size
    from jax_benchmarks.frameworks.typed import typed_jit
    from jax_benchmarks.scipy.jax_backend import calibration_loss, fresh_jitted_loss

    # The cache belongs to the Python function: every jit wrapper of it shares it.
    typed_jit(calibration_loss)(jnp.array([1.0, 0.0]), jnp.ones(7), jnp.ones(7))
    assert cache_size(typed_jit(calibration_loss)) >= 1
    loss = fresh_jitted_loss()
    params = jnp.array([1.0, 0.0])
    assert cache_size(loss.call) == 0 and not loss.traces
    loss.call(params, jnp.ones(8), jnp.ones(8))
    loss.call(params, jnp.ones(8) * 2, jnp.ones(8))
    assert cache_size(loss.call) == 1 and loss.traces == {8: 1}
    loss.call(params, jnp.ones(9), jnp.ones(9))
    assert cache_size(loss.call) == 2 and loss.traces == {8: 1, 9: 1}


def test_all_prints_one_table_and_records_the_disagreement(
    all_run: tuple[Result, list[dict[str, Any]]],
) -> None:
    result, records = all_run
    for text in ("numpy", "jax", "pytorch", "L-BFGS", "calibration fit", "evaluations",
                 "per evaluation", "largest disagreement"):
        assert text in result.stdout
    titles = [line.strip() for line in result.stdout.splitlines() if line.startswith("scipy: numpy, jax, pytorch")]
    # One comparison table (its memory table follows): whole, or, where the console is narrower than its columns,
    # split by columns into consecutive parts, each titled with the columns it holds (never cropped at the edge).
    timing = [title for title in titles if not title.endswith(": memory")]
    assert timing == ["scipy: numpy, jax, pytorch"] or (len(timing) > 1 and all(
        re.fullmatch(r"scipy: numpy, jax, pytorch \(columns \d+–\d+ of \d+\)", title) for title in timing))
    for backend, method in (("numpy", "BFGS"), ("jax", "BFGS"), ("pytorch", "L-BFGS")):
        _check_recovered(records, backend, method)
    solves = [r for r in records if r["case"].startswith("solve_")]
    (agree,) = [r for r in records if r["case"] == f"agreement_{LENGTH}_float64"]
    slopes = [r["metrics"]["slope"] for r in solves]
    assert agree["backend"] == "all"
    assert agree["checks"]["max_rel_diff_slope"] == pytest.approx((max(slopes) - min(slopes)) / max(slopes))
    assert agree["checks"]["passed"] is True and agree["checks"]["max_rel_diff"] <= 1e-3
    assert len({r["run_id"] for r in records}) == 1


def test_all_fails_after_recording_when_backends_disagree(results_path: Path) -> None:
    # A loose tolerance stops the optimizers at different points: still near (1.5, 3), not in agreement.
    result = invoke("scipy", "all", "--array-length", LENGTH, "--tol", "0.05", "--repeats", "1", "--min-time", "0.01",
                    "--device", "cpu", "--results", str(results_path), "--json")
    assert result.exit_code == 1
    assert "check failed: backends disagree" in result.stderr
    records = json.loads(result.stdout)  # the JSON and the file still hold every record
    assert records == read_jsonl(results_path)
    assert all(r["checks"]["recovered"] for r in records if r["case"].startswith("solve_"))
    agree = records[-1]
    assert agree["backend"] == "all" and agree["checks"]["passed"] is False
    assert agree["checks"]["max_rel_diff"] > 1e-3


def test_json_prints_only_the_records(results_path: Path) -> None:
    result = invoke("scipy", "numpy", "--array-length", "500", "--repeats", "1", "--min-time", "0.01",
                    "--device", "cpu",
                    "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)
    assert [r["case"] for r in records] == ["solve_500_float64", "loss_eval_500_float64"]
    assert records == read_jsonl(results_path)
    assert "calibration fit" in result.stderr


def test_failed_recovery_exits_1_after_recording(results_path: Path) -> None:
    # 10 samples with seed 0: the noise wins (offset about 2.45).
    result = invoke("scipy", "numpy", "--array-length", "10", "--seed", "0", "--repeats", "1", "--min-time", "0.01",
                    "--results", str(results_path))
    assert result.exit_code == 1
    assert "check failed: numpy solve_10_float64 @cpu: recovered slope" in result.stderr
    assert "--array-length" in result.stderr
    records = read_jsonl(results_path)
    assert [r["case"] for r in records] == ["solve_10_float64", "loss_eval_10_float64"]  # both, then the failure
    assert _single(records, "solve_10_float64")["checks"]["recovered"] is False


@pytest.mark.parametrize(("backend", "pattern", "cases"), [
    ("numpy", "loss_eval", ["loss_eval_500_float64"]),
    ("pytorch", "solve_*", ["solve_500_float64"]),
    ("numpy", "nothing-matches", []),
])
def test_k_runs_only_the_selected_cases(backend: str, pattern: str, cases: list[str], results_path: Path) -> None:
    result = invoke("scipy", backend, "--array-length", "500", "--repeats", "1", "--min-time", "0.01",
                    "--device", "cpu",
                    "-k", pattern, "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)
    assert [r["case"] for r in records] == cases
    on_disk = read_jsonl(results_path) if results_path.exists() else []
    assert on_disk == records
    if cases == ["solve_500_float64"]:
        assert records[0]["checks"]["recovered"] is True and records[0]["metrics"]["method"] == "L-BFGS"


@pytest.mark.parametrize("backend", ["numpy", "jax", "pytorch"])
def test_suites_declare_their_cases_without_making_data(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from jax_benchmarks.scipy import cases
    from jax_benchmarks.scipy.settings import ScipySettings

    def no_data(*_: object) -> None:
        raise AssertionError("building a suite made the sensor data")

    monkeypatch.setattr(cases, "make_sensor_data", no_data)
    settings = ScipySettings.model_validate({"array_length": 10_000_000, "device": "cpu"})
    (suite,) = importlib.import_module(f"jax_benchmarks.scipy.{backend}_backend").suites(settings)
    new_shape = ["loss_eval_5000000_float64"] if backend == "jax" else []
    assert [c.name for c in suite.cases] == ["solve_10000000_float64", "loss_eval_10000000_float64", *new_shape]
    assert (suite.target.backend, suite.target.device) == (backend, "cpu")
    assert all(c.params["array_length"] == 10_000_000 and c.compiled == (backend == "jax") for c in suite.cases)


def _single(records: list[dict[str, Any]], case: str) -> dict[str, Any]:
    (record,) = [r for r in records if r["case"] == case]
    return record


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--array-length", "9"], "10 ≤ value"),
        (["--array-length", "12.5"], "not a valid integer"),
        (["--array-length", "ten"], "not a valid integer"),
        (["--tol", "0"], "0 < value"),
    ],
)
def test_bad_input_is_one_line_exit_2(args: list[str], expected: str, results_path: Path) -> None:
    result = invoke("scipy", "numpy", *args, "--results", str(results_path))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "--array-length" in lines[0] or "--tol" in lines[0]
    assert expected in lines[0]
    assert "Traceback" not in result.stderr
    assert not results_path.exists() or results_path.read_text() == ""


def test_help_lists_backends_and_options() -> None:
    result = invoke("scipy", "--help")
    assert result.exit_code == 0
    for name in ("numpy", "jax", "pytorch", "all"):
        assert name in result.stdout
    help_all = invoke("scipy", "all", "--help")
    assert "--array-length" in help_all.stdout and "--tol" in help_all.stdout


def test_help_imports_no_framework() -> None:
    results = [probe(args) for args in (["scipy"], ["scipy", "all"], ["scipy", "jax"])]
    assert all(r["code"] == 0 for r in results), results
    assert all(r["heavy"] == [] for r in results), results
