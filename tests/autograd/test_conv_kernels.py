"""`autograd jax|all --xla-cpu-conv xla|ynnpack`: which kernels XLA:CPU runs the Flax CNN's convolutions on, set in
XLA_FLAGS before JAX loads (the one code path `mnist flax` uses) and named by the record."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.autograd.settings import AllSettings, CnnSettings, FlaxCnnSettings
from jax_benchmarks.cli.commands import conv_kernels_before_import
from jax_benchmarks.hardware.xla_flags import DOTS_ONLY, YNNPACK_OPS, set_before_jax
from tests.conftest import invoke, read_jsonl

REPO = Path(__file__).resolve().parents[2]
CNN_ONLY = ("-k", "cnn_", "--cnn-batch", "8", "--repeats", "1", "--device", "cpu")


def run_fresh(tmp_path: Path, xla_flags: str | None, *args: str) -> tuple[str, list[dict[str, Any]]]:
    """`python main.py autograd ARGS` in a fresh interpreter (JAX not loaded yet, as a user starts it); its stdout
    and its train-step records."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"PYTHONPATH": f"{REPO / 'src'}:{REPO}"}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    proc = subprocess.run([sys.executable, str(REPO / "main.py"), "autograd", *args, *CNN_ONLY, "--results", "r.jsonl"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    return proc.stdout, [r for r in read_jsonl(tmp_path / "r.jsonl") if r["variant"] == "train step"]


# e2e: a fresh interpreter that trains; twins: test_the_flag_is_set_only_before_jax_loads and
# test_only_a_command_running_jax_on_the_cpu_sets_the_flag (in process)
@pytest.mark.e2e
def test_autograd_jax_sets_xla_kernels_before_jax_by_default(tmp_path: Path) -> None:
    stdout, (record,) = run_fresh(tmp_path, None, "jax")
    said = " ".join(stdout.split())  # the note wraps at the console's width (80 columns in a pipe)
    assert f"XLA_FLAGS={YNNPACK_OPS}={DOTS_ONLY} set before importing JAX" in said
    assert record["backend"] == "jax" and record["params"]["xla_cpu_conv"] == "xla"
    assert record["env"]["xla_flags"] == f"{YNNPACK_OPS}={DOTS_ONLY}"  # what the process ran with


# e2e: a fresh interpreter that trains; twins: test_the_flag_is_set_only_before_jax_loads and
# test_only_a_command_running_jax_on_the_cpu_sets_the_flag (in process)
@pytest.mark.e2e
def test_autograd_all_with_ynnpack_removes_the_flag_and_keeps_the_users(tmp_path: Path) -> None:
    stdout, records = run_fresh(tmp_path, f"{YNNPACK_OPS}={DOTS_ONLY} --xla_cpu_enable_fast_math=false",
                                "all", "--xla-cpu-conv", "ynnpack")
    assert "XLA_FLAGS=" not in stdout  # nothing added: jaxlib's default kernels
    assert {r["backend"] for r in records} == {"jax", "pytorch", "numpy"}
    flax = next(r for r in records if r["backend"] == "jax")
    assert flax["params"]["xla_cpu_conv"] == "ynnpack"
    assert flax["env"]["xla_flags"] == "--xla_cpu_enable_fast_math=false"
    # the kernels are Flax's alone: PyTorch's and the engine's records do not name them
    assert all("xla_cpu_conv" not in r["params"] for r in records if r["backend"] != "jax")


def test_the_flag_is_set_only_before_jax_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    environ = {"XLA_FLAGS": "--xla_dump_to=/tmp/d"}
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    conv, notes = set_before_jax("xla", 1, environ)
    assert conv == "xla" and environ["XLA_FLAGS"] == f"--xla_dump_to=/tmp/d {YNNPACK_OPS}={DOTS_ONLY}"
    assert len(notes) == 1 and notes[0].startswith(f"XLA_FLAGS={YNNPACK_OPS}={DOTS_ONLY} set before importing JAX")
    # JAX loaded (a second command in one process): nothing changes, the kernels in effect are returned
    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax", object()))
    assert set_before_jax("ynnpack", 1, environ) == ("xla", [])
    assert set_before_jax("xla", 1, {"XLA_FLAGS": "--xla_dump_to=/tmp/d"}) == ("ynnpack", [])


def test_only_a_command_running_jax_on_the_cpu_sets_the_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.delitem(sys.modules, "jax", raising=False)
    set_conv_kernels = conv_kernels_before_import("jax")  # autograd's: its JAX backend is "jax"
    assert set_conv_kernels(["pytorch"], CnnSettings()) == CnnSettings()
    assert set_conv_kernels(["pytorch", "numpy"], AllSettings(xla_cpu_conv="xla")).xla_cpu_conv == "xla"
    assert "XLA_FLAGS" not in os.environ  # no JAX backend: nothing said or set
    settings = set_conv_kernels(["jax"], FlaxCnnSettings(device="cpu", xla_cpu_conv="xla"))
    assert settings.xla_cpu_conv == "xla" and os.environ["XLA_FLAGS"] == f"{YNNPACK_OPS}={DOTS_ONLY}"


@pytest.mark.parametrize("command", ["jax", "all"])
def test_a_bad_kernel_choice_is_one_line_and_exit_2(command: str) -> None:
    result = invoke("autograd", command, "--xla-cpu-conv", "eigen")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == ["Error: Invalid value for '--xla-cpu-conv': 'eigen' is not one of "
                                                  "'xla', 'ynnpack'."]


@pytest.mark.parametrize("command", ["pytorch", "numpy"])
def test_backends_without_flax_have_no_kernel_option(command: str) -> None:
    result = invoke("autograd", command, "--xla-cpu-conv", "xla")
    assert result.exit_code == 2 and "--xla-cpu-conv" in result.stderr
