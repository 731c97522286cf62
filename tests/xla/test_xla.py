"""xla group: every backend and dtype at N=64, `all`, the checks, bad input and lazy --help."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.errors import CheckFailed
from jax_benchmarks.measure.memory import parse_meminfo
from jax_benchmarks.run import Run
from jax_benchmarks.xla import checks, memory
from jax_benchmarks.xla.settings import XlaSettings
from tests.help_probe import probe
from tests.conftest import auto_device, invoke, read_jsonl

BACKENDS = ("numpy", "pytorch", "jax")
DTYPES = ("float64", "float32")
N = 64


def make_settings(**values: Any) -> XlaSettings:
    # model_validate: mypy (without pydantic's plugin) does not see the fields' defaults
    return XlaSettings.model_validate(values)


def expected_cases(n: int, dtype: str) -> set[str]:
    return {
        f"uniform_2x{n}x{n}_{dtype}", f"mean_2x{n}x{n}_{dtype}", f"sum_2x{n}x{n}_{dtype}",
        f"matmul_{n}x{n}_{dtype}", f"inverse_{n}x{n}_{dtype}", f"residual_{n}x{n}_{dtype}",
    }


def by_case(records: list[dict[str, Any]], op: str) -> dict[str, Any]:
    (record,) = [r for r in records if r["case"].startswith(op + "_")]
    return record


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_backend_records_checked_values(backend: str, dtype: str, results_path: Path) -> None:
    result = invoke("xla", backend, "--matrix-size", str(N), "--dtype", dtype, "--repeats", "1", "--min-time", "0.01",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.output + result.stderr
    records = read_jsonl(results_path)
    assert {r["case"] for r in records} == expected_cases(N, dtype)
    assert len(records) == 6
    device = auto_device(backend)
    assert all(r["backend"] == backend and r["dtype"] == dtype and r["device"] == device for r in records)
    assert all(r["env"]["precision"] == "float32" for r in records)
    assert all(r["median_s"] > 0 and r["repeats"] >= 1 for r in records)

    means = by_case(records, "mean")["checks"]
    sums = by_case(records, "sum")["checks"]
    for name in ("a", "b"):
        assert means[f"mean_{name}"] == pytest.approx(0.5, rel=means[f"mean_{name}_rel_tol"])
        assert sums[f"sum_{name}"] == pytest.approx(N * N / 2, rel=sums[f"sum_{name}_rel_tol"])
        # the sum and the mean were computed from the same matrix
        assert sums[f"sum_{name}"] == pytest.approx(means[f"mean_{name}"] * N * N, rel=1e-4)

    matmul = by_case(records, "matmul")
    assert matmul["checks"]["computed_dtype"] == dtype
    assert matmul["checks"]["mean_c"] == pytest.approx(N / 4, rel=matmul["checks"]["mean_c_rel_tol"])
    assert matmul["checks"]["mean_c_ok"] is True
    assert matmul["metrics"]["gflops"] == pytest.approx(2 * N**3 / matmul["median_s"] / 1e9)

    residual = by_case(records, "residual")["checks"]["residual"]
    # cond(C) grows like N³; at N=64 the inverse is still good in both precisions
    assert 0 <= residual < (1e-8 if dtype == "float64" else 0.5)
    compiled = [r["compile_s"] is not None for r in records]
    assert all(compiled) if backend == "jax" else not any(compiled)
    if backend == "jax":
        import jax

        # x64 was scoped to the run: nothing else in this process computes in float64 by surprise
        assert jax.numpy.ones(1).dtype == jax.numpy.float32


def test_same_seed_same_matrices_other_seed_other(results_path: Path) -> None:
    def mean_a(seed: str) -> float:
        invoke("xla", "numpy", "--matrix-size", "16", "--repeats", "1", "--min-time", "0.01",
               "--seed", seed, "--results", str(results_path))
        value = by_case(read_jsonl(results_path)[-6:], "mean")["checks"]["mean_a"]
        assert isinstance(value, float)
        return value

    first, again, other = mean_a("1"), mean_a("1"), mean_a("2")
    assert first == again != other


def test_all_gives_one_record_per_case_and_backend(results_path: Path) -> None:
    result = invoke("xla", "all", "--matrix-size", "32", "--repeats", "1", "--min-time", "0.01",
                    "--json", "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)  # --json: stdout is only the array
    assert records == read_jsonl(results_path)
    pairs = [(r["case"], r["backend"]) for r in records]
    assert sorted(pairs) == sorted((case, b) for case in expected_cases(32, "float64") for b in BACKENDS)
    assert len({r["run_id"] for r in records}) == 1
    # the human table went to stderr (wrapped at 80 columns), with the GFLOP/s row
    assert "GFLOP/s" in result.stderr and "matmul_32x32" in result.stderr
    for backend in BACKENDS:
        assert backend in result.stderr


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0", "1 ≤ value"), ("-1", "1 ≤ value"), ("abc", "not a valid integer"),
     ("2.5", "not a valid integer"), ("10000000", "GiB")],
)
def test_bad_matrix_size_is_refused_before_any_work(value: str, expected: str, results_path: Path) -> None:
    result = invoke("xla", "all", f"--matrix-size={value}", "--results", str(results_path))
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--matrix-size" in lines[0] and expected in lines[0]
    assert "Traceback" not in result.output + result.stderr
    assert not results_path.exists() or read_jsonl(results_path) == []


def test_memory_guard_names_the_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 100 * 2**20)  # 100 MiB free
    result = invoke("xla", "numpy", "--matrix-size", "3000", "--dtype", "float32")
    assert result.exit_code == 2
    # 3 × 3000² × 4 bytes = 0.1 GiB; the largest N fitting 100 MiB is 2956
    assert "needs 0.101 GiB (3 matrices), 0.0977 GiB free on the host; largest that fits: 2956" in result.stderr
    assert make_settings(matrix_size=2956, dtype="float32").matrix_size == 2956
    with pytest.raises(ValueError, match="largest that fits: 2956"):
        make_settings(matrix_size=2957, dtype="float32")


def test_memory_guard_checks_the_gpu_when_running_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 2**40)
    monkeypatch.setattr(memory, "gpu_free_bytes", lambda: 2**30)
    assert memory.memory_shortfall(20_000, "float64", 8, "cpu") is None
    message = memory.memory_shortfall(20_000, "float64", 8, "gpu")
    assert message is not None and "free on the GPU" in message
    assert memory.memory_shortfall(20_000, "float64", 8, "gpu") == message
    assert memory.memory_shortfall(100, "float64", 8, "gpu") is None


def test_free_memory_parsers() -> None:
    assert parse_meminfo("MemTotal: 100 kB\nMemAvailable:   2048 kB\n") == 2048 * 1024
    assert parse_meminfo("MemTotal: 100 kB\n") is None
    assert memory.required_bytes(2000, 8) == 3 * 2000 * 2000 * 8
    free = memory.required_bytes(1234, 4)
    assert memory.largest_size(free, 4) == 1234


def test_one_nvidia_smi_query_serves_names_free_memory_and_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from jax_benchmarks.hardware import devices, environment

    fake = tmp_path / "nvidia-smi"  # answers like nvidia-smi for two GPUs, logs how it was asked
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {tmp_path / "asked"}\n'
        'case "$1" in\n'
        '  --query-gpu=name) printf "NVIDIA H100 80GB HBM3\\nNVIDIA A100-SXM4-40GB\\n" ;;\n'
        '  --query-gpu=memory.free) printf "15360\\n8000\\n" ;;\n'
        '  --query-gpu=driver_version) printf "550.54.15\\n550.54.15\\n" ;;\n'
        '  --query-gpu=name,memory.free) printf "NVIDIA H100 80GB HBM3, 15360\\n" ;;\n'
        '  *) echo "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |" ;;\n'
        "esac\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert devices.query_gpus("name", "memory.free") == [["NVIDIA H100 80GB HBM3", "15360"]]
    names = devices.gpu_names.__wrapped__()
    assert names == ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB")
    assert memory.gpu_free_bytes() == 15360 * 2**20  # the first GPU: the one the frameworks use
    monkeypatch.setattr(environment, "gpu_names", lambda: names)
    assert environment.nvidia_versions() == {"gpu_driver": "550.54.15", "cuda_driver_api": "12.4"}
    asked = (tmp_path / "asked").read_text().splitlines()
    assert all(a.endswith("--format=csv,noheader,nounits") for a in asked if a.startswith("--query-gpu"))
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))  # no nvidia-smi: nothing known, nothing raised
    assert devices.query_gpus("name") == [] and memory.gpu_free_bytes() is None


def test_settings_refuse_at_model_level(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 0)
    with pytest.raises(ValueError, match="free on the host"):
        make_settings(matrix_size=1)
    monkeypatch.setattr(memory, "host_available_bytes", lambda: None)  # unknown: not refused
    assert make_settings(matrix_size=1).matrix_size == 1


def test_tolerance_is_one_percent_for_large_n_and_wider_for_small() -> None:
    assert checks.matrix_mean("m", 2000, 0.5).rel_tol == checks.MIN_REL_TOL
    assert checks.product_mean(5000, 1250.0).rel_tol == checks.MIN_REL_TOL
    assert checks.matrix_mean("m", 64, 0.5).rel_tol > checks.MIN_REL_TOL
    assert checks.matrix_mean("m", 2000, 0.5 * 1.009).ok
    assert not checks.matrix_mean("m", 2000, 0.5 * 1.011).ok
    assert not checks.matrix_sum("s", 2000, math.nan).ok
    assert not checks.product_mean(2000, 0.0).ok
    assert checks.dtype_failure("float64", "float32") is not None
    assert checks.dtype_failure("float32", "float32") is None


def test_product_mean_sigma_matches_simulation() -> None:
    # The tolerance rests on this variance formula: compare it with 400 draws.
    import numpy as np

    n, rng = 32, np.random.default_rng(0)
    means = [(rng.random((n, n)) @ rng.random((n, n))).mean() / (n / 4) for _ in range(400)]
    assert float(np.std(means)) == pytest.approx(checks.product_mean_sigma_rel(n), rel=0.15)


def run_numpy_ops(ops: Any, settings: XlaSettings, results_path: Path, *patterns: str) -> None:
    from jax_benchmarks.measure.harness import run_suite
    from jax_benchmarks.xla.workload import workload_suite

    run_suite(Run("xla", results_path), workload_suite(ops, settings), repeats=1, patterns=patterns)


def test_broken_product_is_recorded_then_fails(results_path: Path) -> None:
    from jax_benchmarks.xla.numpy_backend import Matrix, NumpyOps

    class WrongProduct(NumpyOps):
        def matmul(self, a: Matrix, b: Matrix) -> Matrix:
            return (a @ b) * 0.9  # 10 % off: mean(C) misses N/4

    settings = make_settings(matrix_size=600, repeats=1, device="cpu", results=results_path)
    with pytest.raises(CheckFailed, match=r"^check failed: numpy matmul_600x600_float64 @cpu: mean_c = .*FAILED\)$"):
        run_numpy_ops(WrongProduct(settings), settings, results_path)
    recorded = read_jsonl(results_path)
    # every case is recorded before the failure is raised; the inverse and residual of the wrong C too
    assert [r["case"].split("_")[0] for r in recorded] == ["uniform", "mean", "sum", "matmul", "inverse", "residual"]
    (matmul,) = [r for r in recorded if r["case"] == "matmul_600x600_float64"]
    assert matmul["checks"]["mean_c_ok"] is False


def test_float64_silently_computed_in_float32_fails(results_path: Path) -> None:
    import numpy as np

    from jax_benchmarks.xla.numpy_backend import Matrix, NumpyOps

    class Truncating(NumpyOps):
        def matmul(self, a: Matrix, b: Matrix) -> Matrix:
            return (a @ b).astype(np.float32)

    settings = make_settings(matrix_size=32, repeats=1, device="cpu", results=results_path)
    with pytest.raises(CheckFailed, match="^check failed: numpy matmul_32x32_float64 @cpu: computed in float32, float64 was requested$"):
        run_numpy_ops(Truncating(settings), settings, results_path, "matmul")
    (matmul,) = read_jsonl(results_path)
    assert matmul["checks"]["computed_dtype"] == "float32"


def test_check_failure_exits_1_with_one_line(monkeypatch: pytest.MonkeyPatch, results_path: Path) -> None:
    monkeypatch.setattr(checks, "MIN_REL_TOL", 0.0)
    monkeypatch.setattr(checks, "SIGMAS", 0.0)  # nothing can pass a zero tolerance
    result = invoke("xla", "numpy", "--matrix-size", "16", "--repeats", "1", "--min-time", "0.01",
                    "--results", str(results_path))
    assert result.exit_code == 1
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("Error: check failed: numpy mean_2x16x16_float64 @cpu: mean_a = ")
    for case in ("mean_2x16x16_float64 @cpu: mean_b", "sum_2x16x16_float64 @cpu: sum_a", "matmul_16x16_float64 @cpu: mean_c"):
        assert case in error
    assert "Traceback" not in result.stderr
    # the failure is raised once every case is recorded: nothing measured is lost
    assert {r["case"] for r in read_jsonl(results_path)} == expected_cases(16, "float64")


@pytest.mark.parametrize(("backend", "pattern", "op"), [
    ("numpy", "matmul", "matmul"), ("pytorch", "residual", "residual"), ("numpy", "inverse_*", "inverse"),
])
def test_k_times_only_the_selected_case(backend: str, pattern: str, op: str, results_path: Path) -> None:
    """The inputs of a selected case are made untimed when the case that makes them is not selected."""
    result = invoke("xla", backend, "--matrix-size", "48", "--repeats", "1", "--min-time", "0.01",
                    "--device", "cpu", "-k", pattern,
                    "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    (record,) = read_jsonl(results_path)
    assert record["case"] == f"{op}_48x48_float64" and record["backend"] == backend
    if op == "matmul":  # checked against the pair made untimed: the same seeded pair as a full run
        assert record["checks"]["mean_c_ok"] is True
    if op == "residual":  # C and C⁻¹ made untimed, and right
        assert 0 <= record["checks"]["residual"] < 1e-8
    assert "skipped: " in result.stdout and "not selected by -k" in result.stdout


def test_k_case_equals_the_same_case_of_a_full_run(results_path: Path) -> None:
    full, alone = results_path.with_name("full.jsonl"), results_path.with_name("alone.jsonl")
    for path, extra in ((full, []), (alone, ["-k", "matmul"])):
        result = invoke("xla", "numpy", "--matrix-size", "40", "--repeats", "1", "--min-time", "0.01",
                        "--results", str(path), *extra)
        assert result.exit_code == 0, result.stderr
    (matmul,) = [r for r in read_jsonl(full) if r["case"].startswith("matmul_")]
    (only,) = read_jsonl(alone)
    assert only["checks"] == matmul["checks"] and only["params"] == matmul["params"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_suites_declare_six_cases_without_allocating(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    # 10⁶×10⁶ float64 is 8 TB a matrix: building the suite must not make one (the guard is told it fits)
    monkeypatch.setattr(memory, "host_available_bytes", lambda: 2**62)
    monkeypatch.setattr(memory, "gpu_free_bytes", lambda: 2**62)
    n = 1_000_000
    settings = make_settings(matrix_size=n, device="cpu")
    (suite,) = importlib.import_module(f"jax_benchmarks.xla.{backend}_backend").suites(settings)
    assert [c.name for c in suite.cases] == [
        f"uniform_2x{n}x{n}_float64", f"mean_2x{n}x{n}_float64", f"sum_2x{n}x{n}_float64",
        f"matmul_{n}x{n}_float64", f"inverse_{n}x{n}_float64", f"residual_{n}x{n}_float64",
    ]
    assert suite.target.backend == backend and suite.target.device == "cpu"
    assert all(c.params["matrix_size"] == n and c.params["seed"] == settings.seed for c in suite.cases)
    assert all(c.compiled == (backend == "jax") for c in suite.cases)


def test_numpy_on_gpu_only_is_skipped_with_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from jax_benchmarks.hardware import devices
    from jax_benchmarks.measure.harness import run_suite
    from jax_benchmarks.xla import numpy_backend

    monkeypatch.setattr(devices, "gpu_names", lambda: ("Some GPU",))
    monkeypatch.setattr(memory, "gpu_free_bytes", lambda: 2**40)
    lines: list[str] = []
    run = Run("xla", tmp_path / "r.jsonl", log=lines.append)
    for suite in numpy_backend.suites(make_settings(matrix_size=8, device="gpu")):
        run_suite(run, suite, repeats=1)
    assert run.records == [] and lines == ["numpy: skipped: NumPy runs on the CPU only (--device gpu; use --device cpu or auto)"]


def test_help_lists_backends_and_options() -> None:
    group = invoke("xla", "--help")
    assert group.exit_code == 0
    for name in (*BACKENDS, "all"):
        assert name in group.stdout
    command = invoke("xla", "jax", "--help")
    assert command.exit_code == 0
    assert "--matrix-size" in command.stdout and "[float64|float32]" in command.stdout


def test_unknown_backend_is_one_line() -> None:
    result = invoke("xla", "tensorflow")
    assert result.exit_code == 2
    assert "numpy, pytorch, jax, all" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [["xla"], ["xla", "all"], ["xla", "jax"]])
def test_help_imports_no_framework(args: list[str]) -> None:
    result = probe(args)
    assert result["code"] == 0 and result["heavy"] == [], result


@pytest.mark.parametrize("pattern", [None, "inverse", "residual"])
def test_at_most_the_estimated_matrices_are_alive(pattern: str | None, results_path: Path) -> None:
    """The matrices are fixtures the harness drops once no case still to run needs them: entering each
    step, only its inputs are alive (A and B are gone before the inverse), as memory.MATRICES_HELD counts."""
    import weakref

    from jax_benchmarks.xla.numpy_backend import Matrix, NumpyOps

    made: list[weakref.ref[Matrix]] = []
    alive_on_entry: dict[str, int] = {}

    def alive() -> int:
        return sum(ref() is not None for ref in made)

    class Counting(NumpyOps):
        def track(self, step: str, *made_now: Matrix) -> None:
            made.extend(weakref.ref(m) for m in made_now)

        def enter(self, step: str) -> None:
            alive_on_entry[step] = max(alive_on_entry.get(step, 0), alive())

        def uniform_pair(self) -> tuple[Matrix, Matrix]:
            pair = super().uniform_pair()
            self.track("uniform", *pair)
            return pair

        def matmul(self, a: Matrix, b: Matrix) -> Matrix:
            self.enter("matmul")
            c = super().matmul(a, b)
            self.track("matmul", c)
            return c

        def inverse(self, c: Matrix) -> Matrix:
            self.enter("inverse")
            c_inv = super().inverse(c)
            self.track("inverse", c_inv)
            return c_inv

        def residual(self, c: Matrix, c_inv: Matrix) -> Any:
            self.enter("residual")
            return super().residual(c, c_inv)

    settings = make_settings(matrix_size=32, repeats=2, device="cpu", results=results_path)
    run_numpy_ops(Counting(settings), settings, results_path, *([pattern] if pattern else []))
    assert alive_on_entry.get("inverse", 1) == 1  # C alone: A and B were dropped
    assert alive_on_entry.get("residual", 2) == 2  # C and C⁻¹
    assert alive_on_entry.get("matmul", 2) == 2  # A and B
    assert made and alive() == 0  # nothing outlives the suite
