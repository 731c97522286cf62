"""PyTorch's vectorised gradient as its users write it for an elementwise f: one backward() on the sum, eager and
(`--compile`) with f compiled; and the verdict's labels name the engine as what it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jax_benchmarks.verdict.answer import answers
from jax_benchmarks.verdict.findings import all_findings, latest_runs
from tests.conftest import invoke, read_jsonl
from tests.verdict.fixtures import figure

torch = pytest.importorskip("torch")


def test_the_gradient_of_the_sum_is_f_prime_at_every_point() -> None:
    from jax_benchmarks.autograd.pytorch_backend import loop_grad, sum_backward
    from jax_benchmarks.example_function.in_torch import f

    x = torch.linspace(0.0, 10.0, 50, dtype=torch.float64)
    expected = 0.2 + torch.cos(x) - 2 * torch.sin(2 * x)
    assert np.allclose(sum_backward(f)(x).numpy(), expected.numpy(), atol=1e-12)
    assert np.allclose(sum_backward(f)(x).numpy(), loop_grad(x).numpy(), atol=1e-12)


@pytest.mark.e2e  # dynamo traces f (and again for the shown points): tens of seconds on a busy 2-core CPU
def test_compile_adds_the_compiled_gradient_of_the_sum_with_its_compile_time(results_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.frameworks.torch_compile as torch_compile

    real = torch.compile

    def traced_only(fn: Callable[..., Any], mode: str, dynamic: bool) -> Callable[..., Any]:
        return real(fn, backend="eager", dynamic=dynamic)  # type: ignore[no-any-return]  # dynamo, no inductor

    monkeypatch.setattr(torch_compile.torch, "compile", traced_only)
    result = invoke("autograd", "pytorch", "--quick", "--compile", "max-autotune", "--points", "16", "-k", "backward",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.output
    by_variant = {r["variant"]: r for r in read_jsonl(results_path)}
    assert list(by_variant) == ["backward(sum)", "backward(sum) compile:max-autotune"]
    compiled = by_variant["backward(sum) compile:max-autotune"]
    assert compiled["compile_s"] is not None and by_variant["backward(sum)"]["compile_s"] is None
    assert compiled["checks"]["max_abs_err_df"] < 1e-4  # checked against the closed form like every variant


def test_compile_is_refused_before_any_work_where_inductor_cannot_run(results_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jax_benchmarks.autograd.pytorch_backend.inductor_refusal",
                        lambda kind: "inductor generates C++ on the CPU and finds no C++ compiler (g++ not found)")
    result = invoke("autograd", "pytorch", "--quick", "--compile", "--results", str(results_path))
    assert result.exit_code == 2 and result.stderr.strip().count("\n") == 0 and "--compile" in result.stderr
    assert not results_path.exists()


def test_the_verdict_names_the_engine_never_numpy() -> None:
    case = "grad_1000_float32"
    records = (figure("autograd", "numpy", case, 0.004, variant="vectorised")
               + figure("autograd", "pytorch", case, 0.002, variant="backward(sum)")
               + figure("autograd", "jax", case, 0.001, variant="vmap+jit"))
    found = all_findings(latest_runs(records))
    gradients = next(f for f in found if f.key == f"autograd-{case}")
    labels = [row[0] for row in gradients.rows]
    assert "the project's engine (NumPy) vectorised" in labels and not any(l.startswith("numpy") for l in labels)
    # The plain answer sets JAX against the best of the others: PyTorch's gradient of the sum here, not the engine.
    [answer] = [a for a in answers(found) if a.key == gradients.key]
    assert answer.contrast.b == "pytorch backward(sum)"
