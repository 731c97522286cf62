"""The GPU policy: one float32 precision for JAX and PyTorch, autotuning, JAX's memory, recorded everywhere.

These run on the CPU: they check that the settings reach both frameworks and every record. That the GPU then
computes in that precision is checked on a GPU by tests/test_installation.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.frameworks import descriptors
from jax_benchmarks.hardware import devices, gpu_policy
from jax_benchmarks.errors import OutOfMemory
from jax_benchmarks.frameworks.descriptors import is_out_of_memory
from tests.conftest import invoke, read_jsonl


def test_jax_memory_on_demand_unless_the_user_chose() -> None:
    environ: dict[str, str] = {}
    assert descriptors.prepare_jax_gpu_memory(environ) == "on demand"
    assert environ == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}

    chosen = {"XLA_PYTHON_CLIENT_PREALLOCATE": "true", "XLA_PYTHON_CLIENT_MEM_FRACTION": ".5"}
    described = descriptors.prepare_jax_gpu_memory(chosen)
    assert chosen["XLA_PYTHON_CLIENT_PREALLOCATE"] == "true"  # the user's choice is kept
    assert described == "XLA_PYTHON_CLIENT_PREALLOCATE=true, XLA_PYTHON_CLIENT_MEM_FRACTION=.5"


def test_jax_is_prepared_only_where_a_gpu_is_visible(monkeypatch: pytest.MonkeyPatch) -> None:
    """JAX's descriptor hook, which the CLI calls before a run that imports JAX: no GPU, nothing set."""
    assert descriptors.JAX.prepare_environment is not None
    environ: dict[str, str] = {}
    monkeypatch.setattr(devices, "gpu_names", lambda: ())
    assert descriptors.JAX.prepare_environment(environ) == "no GPU" and environ == {}
    monkeypatch.setattr(devices, "gpu_names", lambda: ("NVIDIA H100",))
    assert descriptors.prepare_environments(["numpy"], environ) == {} and environ == {}
    flax_backend_imports = [library.module for library in descriptors.FLAX.needs]  # JAX among them
    assert descriptors.prepare_environments(flax_backend_imports, environ) == {"jax_gpu_memory": "on demand"}
    assert environ == {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}


@pytest.mark.parametrize(("precision", "torch_value", "hlo_precision"),
                         [("float32", "ieee", "HIGHEST"), ("tf32", "tf32", "HIGH")])
def test_policy_reaches_both_frameworks_and_is_undone(precision: gpu_policy.MatmulPrecision, torch_value: str,
                                                      hlo_precision: str) -> None:
    import jax
    import jax.numpy as jnp
    import torch

    before = (torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.benchmark)
    a = jnp.ones((4, 4), jnp.float32)
    with gpu_policy.applied(precision, ["jax", "torch"]):
        assert torch.backends.cuda.matmul.fp32_precision == torch_value
        assert torch.backends.cudnn.conv.fp32_precision == torch_value  # type: ignore[attr-defined]
        assert torch.backends.cudnn.benchmark is True
        # What XLA is asked to compute: the dot's precision in the lowered program.
        lowered = jax.jit(lambda x: x @ x).lower(a).as_text()
        convolved = jax.jit(lambda x: jax.lax.conv(x, x, (1, 1), "VALID")).lower(a[None, None]).as_text()
    assert f"precision = [{hlo_precision}, {hlo_precision}]" in lowered
    assert hlo_precision in convolved
    assert (torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.benchmark) == before


def test_every_record_carries_the_policy(results_path: Path) -> None:
    result = invoke("xla", "jax", "--matrix-size", "32", "--repeats", "1", "--min-time", "0.01", "--device", "cpu",
                    "--precision", "tf32", "--results", str(results_path))
    assert result.exit_code == 0, result.output + result.stderr
    records = read_jsonl(results_path)
    assert len(records) == 6
    for record in records:
        assert record["env"]["precision"] == "tf32"
        assert record["env"]["conv_autotune"] is True
        assert record["env"]["jax_gpu_memory"] in ("no GPU", "on demand") or "XLA_PYTHON" in record["env"]["jax_gpu_memory"]


def test_unknown_precision_is_one_line_exit_2(results_path: Path) -> None:
    result = invoke("xla", "numpy", "--matrix-size", "8", "--precision", "bf16", "--results", str(results_path))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "--precision" in result.stderr and "float32" in result.stderr
    assert not results_path.exists() or results_path.read_text() == ""


class OutOfMemoryError(RuntimeError):
    """Named like torch.OutOfMemoryError, which the CLI recognises by name (torch need not be imported)."""


class XlaRuntimeError(RuntimeError):
    """Named like jaxlib's runtime error."""


def test_out_of_memory_is_recognised_by_name_and_status() -> None:
    assert is_out_of_memory(OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB"))
    assert is_out_of_memory(XlaRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate"))
    assert not is_out_of_memory(XlaRuntimeError("INVALID_ARGUMENT: shapes"))
    assert not is_out_of_memory(MemoryError())
    message = OutOfMemory(OutOfMemoryError("CUDA out of memory.\nmore lines")).format_message()
    assert "\n" not in message and "records so far are saved" in message


def test_device_out_of_memory_mid_run_is_one_line_exit_2(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.xla.numpy_backend as numpy_backend
    from jax_benchmarks.measure.harness import Case, Suite, Target, Timed

    real_suites = numpy_backend.suites

    def run_out() -> Timed[None]:
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate 7.45 GiB (GPU 0; 79.1 GiB total)")

    def suites_then_run_out(settings: object) -> list[Suite]:
        running_out = Suite(Target("numpy", "gpu"), [Case("matmul_99999x99999_float64", run_out)])
        return [*real_suites(settings), running_out]  # type: ignore[arg-type]

    monkeypatch.setattr(numpy_backend, "suites", suites_then_run_out)
    result = invoke("xla", "numpy", "--matrix-size", "16", "--repeats", "1", "--min-time", "0.01",
                    "--results", str(results_path))
    assert result.exit_code == 2, result.output + result.stderr
    assert result.stderr.startswith("Error: out of device memory") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.output + result.stderr
    assert len(read_jsonl(results_path)) == 6  # what was measured before stays recorded
