"""--threads (pinned, recorded, validated), --rounds (fresh processes, one run id) and the environment record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.cli.root import GROUPS
from jax_benchmarks.hardware.devices import cpu_count
from jax_benchmarks.hardware.environment import environment
from jax_benchmarks.cli.rounds import ROUND_FIELDS
from jax_benchmarks.measure.rounds import spreads
from jax_benchmarks.settings import command_line, parse_settings
from jax_benchmarks.frameworks.descriptors import merged_xla_flags
from jax_benchmarks.hardware.threads import framework_environment
from jax_benchmarks.store.location import open_store
from tests.conftest import invoke, read_jsonl

REPO = Path(__file__).resolve().parents[2]

MAIN = Path(__file__).resolve().parents[2] / "main.py"


def run_main(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter: --threads changes process-wide thread pools, which must not leak into other tests."""
    return subprocess.run([sys.executable, str(MAIN), *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_threads_pins_blas_and_xla_and_is_recorded(tmp_path: Path) -> None:
    done = run_main("xla", "numpy", "--matrix-size", "32", "--repeats", "1", "--min-time", "0.01",
                    "--threads", "1", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = json.loads(done.stdout)
    assert len(records) == 6
    for rec in records:
        env = rec["env"]
        assert env["threads"] == 1
        assert env["blas_threads"] == 1 and env["blas"]  # threadpoolctl read OpenBLAS/MKL back: it is pinned
        assert env["xla_threads"] == 1 and "--xla_cpu_multi_thread_eigen=false" in env["xla_flags"]
    # the default store outside a checkout: the user data folder's (tests/conftest.py sets XDG_DATA_HOME)
    store = open_store(tmp_path / "user-data/jax-benchmarks/results.sqlite")
    assert [record.model_dump() for record in store.all_records()] == records


def test_default_threads_is_recorded_as_none(results_path: Path) -> None:
    result = invoke("xla", "numpy", "--matrix-size", "16", "--repeats", "1", "--min-time", "0.01",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.stderr
    env = read_jsonl(results_path)[0]["env"]
    assert env["threads"] is None and "blas_threads" in env and "ram_gib" in env and "host" in env


@pytest.mark.parametrize(("value", "needle"), [
    ("0", "0 is not allowed; allowed: 1 ≤ value ≤ 1024"),
    ("two", "'two' is not a valid integer"),
    (str(cpu_count() + 1), f"allowed: 1–{cpu_count()}"),
])
def test_bad_threads_is_one_line_exit_2(value: str, needle: str, results_path: Path) -> None:
    result = invoke("xla", "numpy", "--threads", value, "--results", str(results_path))
    assert result.exit_code == 2, result.output
    assert "--threads" in result.stderr and needle in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not results_path.exists() or results_path.read_text() == ""


def test_framework_environment_for_one_and_two_threads() -> None:
    one = framework_environment(1, {"XLA_FLAGS": "--xla_foo=1 --xla_cpu_multi_thread_eigen=true"})
    assert one["OPENBLAS_NUM_THREADS"] == one["OMP_NUM_THREADS"] == one["MKL_NUM_THREADS"] == one["NPROC"] == "1"
    assert one["XLA_FLAGS"] == "--xla_foo=1 --xla_cpu_multi_thread_eigen=false"
    two = framework_environment(2, {})
    assert two["NPROC"] == "2" and "XLA_FLAGS" not in two
    assert merged_xla_flags("--xla_cpu_multi_thread_eigen=false", 2) == ""


def test_environment_does_not_import_frameworks() -> None:
    code = ("import sys; from jax_benchmarks.hardware.environment import environment; environment(); "
            "print([m for m in ('torch', 'jax', 'flax') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=MAIN.parent, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    env = environment()
    assert env["ram_gib"] is None or float(env["ram_gib"]) > 0
    assert "xla_threads" in env and "blas" in env


@pytest.mark.parametrize("group", [g for g in GROUPS if g != "report"])
def test_settings_args_rebuild_the_settings_of_every_command(group: str) -> None:
    import importlib

    module = importlib.import_module(GROUPS[group][0])
    spec = module.SPEC
    models = {name: b.settings for name, b in spec.backends.items()}
    if spec.all_settings is not None:
        models["all"] = spec.all_settings
    tested = 0
    for name, model in models.items():
        sub = module.cli.commands[name]
        settings = parse_settings(model, sub.make_context(name, []).params)
        changed = settings.model_copy(update={"seed": 7, "repeats": 3, "threads": 1})
        args = command_line(changed, skip=ROUND_FIELDS)
        assert parse_settings(model, sub.make_context(name, args).params) == changed, (group, name, args)
        tested += 1
    assert tested >= 2


def test_rounds_run_fresh_processes_under_one_run_id(results_path: Path) -> None:
    result = invoke("xla", "numpy", "--matrix-size", "16", "--repeats", "1", "--min-time", "0.01",
                    "--rounds", "2", "--threads", "1",
                    "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.stderr
    records = read_jsonl(results_path)
    assert json.loads(result.stdout) == records
    assert len(records) == 2 * 6
    assert len({r["run_id"] for r in records}) == 1
    assert sorted({r["round_index"] for r in records}) == [0, 1] and {r["rounds"] for r in records} == {2}
    assert {r["env"]["threads"] for r in records} == {1}
    from jax_benchmarks.store.record import Record
    figures = spreads([Record.model_validate(r) for r in records])
    assert len(figures) == 6 and all(len(f.round_medians) == 2 for f in figures)


def test_round_options_are_hidden_and_checked(results_path: Path) -> None:
    help_text = invoke("xla", "numpy", "--help").stdout
    assert "--rounds" in help_text and "--threads" in help_text
    assert "--round-index" not in help_text and "--run-id" not in help_text
    result = invoke("xla", "numpy", "--round-index", "0", "--results", str(results_path))
    assert result.exit_code == 2 and "--round-index needs --run-id" in result.stderr
    result = invoke("xla", "numpy", "--rounds", "0", "--results", str(results_path))
    assert result.exit_code == 2 and "--rounds" in result.stderr


def test_the_blas_kernel_family_is_part_of_the_environment() -> None:
    """OPENBLAS_CORETYPE forces older kernels (2-3x slower matmuls): two runs that differ only in it
    must differ in their recorded environment, so `report --baseline` names the cause."""
    script = "import numpy; from jax_benchmarks.hardware.threads import thread_state; print(thread_state()['blas'])"
    default = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                             cwd=REPO).stdout.strip()
    forced = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO,
                            env={**os.environ, "OPENBLAS_CORETYPE": "Nehalem"}).stdout.strip()
    if "openblas" not in default:
        pytest.skip(f"NumPy's BLAS is not OpenBLAS here: {default}")
    assert "Nehalem kernels" in forced and default != forced
