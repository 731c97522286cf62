"""Compiled-program memory: XLA's analysis is exact, so the known answers are exact too."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp

from jax_benchmarks.measure.harness import Case, Target, Timed, run_cases
from jax_benchmarks.measure.memory import MEASURED, TORCH_COMPILE, compiled_figures, jax_program
from jax_benchmarks.frameworks.descriptors import jax_sync
from jax_benchmarks.run import Run

N = 1000


def test_a_jitted_function_records_its_argument_and_output_bytes(tmp_path: Path) -> None:
    x = jnp.ones((N,), dtype=jnp.float32)
    y = jnp.ones((N, N), dtype=jnp.float32)
    jitted = jax.jit(lambda a, b: (a[:, None] * b).sum(axis=0))
    run = Run("test", tmp_path / "results.jsonl")
    run_cases(run, Target("jax", "cpu"), [
        Case("scaled_sum", lambda: Timed(lambda: jitted(x, y), jax_sync, program=jax_program(jitted, x, y)))
    ], repeats=2)
    memory = run.records[0].memory
    assert memory["compiled_status"] == MEASURED
    assert memory["compiled_argument_bytes"] == 4 * N + 4 * N * N
    assert memory["compiled_output_bytes"] == 4 * N
    assert isinstance(memory["compiled_temp_bytes"], int) and memory["compiled_temp_bytes"] >= 0


def test_fusion_needs_no_temporary_for_an_elementwise_chain() -> None:
    x = jnp.ones((N,), dtype=jnp.float32)
    figures = compiled_figures(jax_program(jax.jit(lambda a: jnp.sin(a) * 2 + 1), x))
    assert figures["compiled_temp_bytes"] == 0
    assert figures["compiled_argument_bytes"] == figures["compiled_output_bytes"] == 4 * N


def test_a_case_without_a_program_records_no_compiled_figure(tmp_path: Path) -> None:
    run = Run("test", tmp_path / "results.jsonl")
    run_cases(run, Target("numpy", "cpu"), [Case("c", lambda: Timed(lambda: 1))], repeats=1)
    assert not any(key.startswith("compiled_") for key in run.records[0].memory)


def test_torch_compile_says_it_is_not_available() -> None:
    figures = compiled_figures(lambda: TORCH_COMPILE)
    assert figures == {"compiled_status": f"unavailable: {TORCH_COMPILE.reason}"}


def test_a_program_that_cannot_be_obtained_is_said_not_guessed() -> None:
    def broken() -> object:
        raise RuntimeError("no compiler here\nsecond line")

    assert compiled_figures(broken) == {"compiled_status": "unavailable: RuntimeError: no compiler here"}
    assert compiled_figures(lambda: object())["compiled_status"].startswith("unavailable: AttributeError")  # type: ignore[union-attr]
