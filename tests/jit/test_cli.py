"""`jit` CLI: lazy --help, one-line errors (exit 2), and the sweep commands on tiny sizes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.jit import pytorch_backend
from tests.help_probe import probe
from tests.conftest import invoke, read_jsonl

HEAVY = ("torch", "jax", "flax", "optax", "comet_ml")


def test_help_of_every_jit_command_imports_no_framework() -> None:
    results = {" ".join(args): probe(args, HEAVY) for args in (["jit"], ["jit", "jax"], ["jit", "all"], ["jit", "flax"])}
    assert all(r["heavy"] == [] for r in results.values()), results
    texts = {k: (r["code"], str(r["help"])) for k, r in results.items()}
    assert all(code == 0 for code, _ in texts.values())
    for backend in ("numpy", "pytorch", "jax", "flax", "all"):
        assert backend in texts["jit"][1]
    assert "--total-items" in texts["jit all"][1]
    for option in ("--model", "--train-batch-size", "--train-images", "--show-jaxpr", "--plot", "--epochs", "--device",
                   "--json"):
        assert option in texts["jit flax"][1], option


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["jit", "jax", "--total-items", "10"], "--total-items"),
        (["jit", "numpy", "--total-items", "12345.5"], "--total-items"),
        (["jit", "all", "--total-items", "abc"], "--total-items"),
        (["jit", "flax", "--model", "rnn"], "--model"),
        (["jit", "flax", "--epochs", "0"], "--epochs"),
        (["jit", "flax", "--batch-size", "0"], "--batch-size"),
        (["jit", "flax", "--data-source", "web"], "--data-source"),
        (["jit", "tensorflow"], "BACKEND"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], names: str) -> None:
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert names in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_numpy_sweep_records_one_figure_per_length(results_path: Path) -> None:
    result = invoke("jit", "numpy", "--total-items", "1e5", "--repeats", "1",
                    "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.stderr
    printed = json.loads(result.stdout)
    records = read_jsonl(results_path)
    assert [r["run_id"] for r in printed] == [r["run_id"] for r in records]
    assert [(r["case"], r["params"]["loop_count"]) for r in records] == [
        ("f_10000_float32", 10), ("f_100000_float32", 1)
    ]
    for rec in records:
        assert (rec["backend"], rec["variant"], rec["device"], rec["dtype"]) == ("numpy", "eager", "cpu", "float32")
        assert rec["median_s"] > 0 and rec["repeats"] >= 1
        assert rec["metrics"]["items_per_s"] == pytest.approx(rec["params"]["total_items"] / rec["median_s"])
        assert rec["checks"]["max_abs_err_vs_numpy_float64"] < 1e-4
    assert "skipped: array_length 1,000,000 > --total-items 100,000" in result.stderr
    assert "f(x1)" in result.stderr


def test_jax_sweep_prints_x1_and_times_eager_and_jit(results_path: Path) -> None:
    result = invoke("jit", "jax", "--total-items", "2e4", "--repeats", "1", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    for label in ("x1", "f(x1)", "jax.jit(f)(x1)", "typed_jit(f)(x1)", "agree with NumPy float64"):
        assert label in result.stdout
    records = read_jsonl(results_path)
    assert [(r["variant"], r["case"]) for r in records] == [
        ("eager", "f_10000_float32"), ("jit", "f_10000_float32")
    ]
    eager, jit = records
    assert eager["params"]["loop_count"] == 2
    assert eager["compile_s"] is None and jit["compile_s"] is not None and jit["compile_s"] >= 0
    assert jit["metrics"]["speedup"] == pytest.approx(eager["median_s"] / jit["median_s"])
    assert jit["checks"]["x1_max_abs_err"] < 1e-4


def test_pytorch_eager_runs_and_a_failing_compile_is_skipped_not_faked(
    results_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_compile() -> Any:
        def fail(_: object) -> object:
            raise RuntimeError("inductor: no working C++ compiler\nmore detail")
        return fail

    monkeypatch.setattr(pytorch_backend, "compiled_f", broken_compile)
    # On the CPU on any machine: the failure imitated is inductor's C++ build, which only a CPU compile needs
    result = invoke("jit", "pytorch", "--device", "cpu", "--total-items", "2e4", "--repeats", "1",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.output
    records = read_jsonl(results_path)
    assert [(r["backend"], r["variant"]) for r in records] == [("pytorch", "eager")]
    assert records[0]["params"]["torch_threads"] >= 1
    assert records[0]["checks"]["max_abs_err_vs_numpy_float64"] < 1e-4
    assert "skipped: pytorch f_10000_float32 [compile] @cpu: RuntimeError: inductor: no working C++ compiler" in (
        " ".join(result.stdout.split())
    )


# e2e: torch.compile builds C++ with gcc; twins: the no-compiler test above (the same run, in process) and
# tests/measure/test_harness.py::test_compile_time_apart_and_speedup_over_a_variant
@pytest.mark.e2e
def test_pytorch_compile_is_timed_with_compile_time_apart(results_path: Path) -> None:
    # torch.compile builds C++ with gcc: a few seconds warm, ~15 s with a cold inductor cache.
    result = invoke("jit", "pytorch", "--total-items", "1e4", "--repeats", "1", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    records = read_jsonl(results_path)
    by_variant = {r["variant"]: r for r in records}
    assert set(by_variant) == {"eager", "compile"}, result.stdout
    compiled = by_variant["compile"]
    assert compiled["compile_s"] is not None and compiled["compile_s"] >= 0
    assert compiled["metrics"]["first_call_s"] >= compiled["median_s"]
    assert compiled["checks"]["max_abs_err_vs_numpy_float64"] < 1e-4
    assert "speedup" in compiled["metrics"]


@pytest.mark.slow
def test_all_prints_one_table_of_every_backend_and_mode(results_path: Path) -> None:
    result = invoke("jit", "all", "--total-items", "1e4", "--repeats", "1", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    columns = {(r["backend"], r["variant"]) for r in read_jsonl(results_path)}
    assert columns == {("numpy", "eager"), ("pytorch", "eager"), ("pytorch", "compile"),
                       ("jax", "eager"), ("jax", "jit")}
    assert "jit: numpy, pytorch, jax" in result.stdout


def test_k_runs_only_the_selected_cases_after_the_x1_check(results_path: Path) -> None:
    result = invoke("jit", "jax", "--total-items", "1e5", "--repeats", "1", "-k", "f_100000_float32 [jit]",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert [(r["case"], r["variant"]) for r in read_jsonl(results_path)] == [("f_100000_float32", "jit")]
    out = " ".join(result.stdout.split())
    assert "agree with NumPy float64" in out  # the x1 check runs before any selection
    # The cases not selected: one line, not one a case (`--list -k` names those that run).
    assert "skipped: jax: 3 of 4 case(s) not selected by -k f_100000_float32 [jit]" in out
    assert "f_10000_float32 [eager]" not in out


def test_gpu_request_without_gpu_is_refused() -> None:
    from jax_benchmarks.hardware.devices import gpu_names

    if gpu_names():
        pytest.skip("a GPU is visible on this machine")
    result = invoke("jit", "jax", "--device", "gpu", "--total-items", "1e4")
    assert result.exit_code == 2
    assert "--device" in result.stderr
