"""`mnist pytorch --compile [MODE]`: the train step compiled by torch.compile, its compile time apart, its
compilations and graph breaks recorded, each record naming its mode; refused before any work where it cannot run.

Most tests trace with dynamo's "eager" backend in place of inductor (`traced_only`): dynamo traces the step, breaks
graphs and counts as it would, without inductor's C++ build (tens of seconds a compile on a 2-core CPU). One test,
marked slow, compiles with inductor itself."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import invoke, read_jsonl
from tests.mnist.conftest import EPOCH, LOAD, STEP, TINY, auto_cases_with_peak

torch = pytest.importorskip("torch")


@pytest.fixture
def traced_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.compile with dynamo's eager backend: traced and counted, nothing generated."""
    import jax_benchmarks.frameworks.torch_compile as torch_compile

    real = torch.compile

    def compile_eagerly(fn: Callable[..., Any], mode: str, dynamic: bool) -> Callable[..., Any]:
        assert mode in ("default", "reduce-overhead", "max-autotune")
        return real(fn, backend="eager", dynamic=dynamic)  # type: ignore[no-any-return]

    monkeypatch.setattr(torch_compile.torch, "compile", compile_eagerly)


def with_side_effect(monkeypatch: pytest.MonkeyPatch) -> None:
    """The step's forward pass prints: a Python side effect dynamo cannot trace, so it breaks the graph there."""
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    real = TorchTrainer._forward_loss

    def printing(self: TorchTrainer, x: Any, y: Any) -> Any:
        print("a side effect in the step", file=sys.stderr)
        return real(self, x, y)

    monkeypatch.setattr(TorchTrainer, "_forward_loss", printing)


def test_compile_records_its_mode_compile_time_and_a_forced_graph_break(traced_only: None, results_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    with_side_effect(monkeypatch)
    result = invoke("mnist", "pytorch", *TINY, "--compile", "reduce-overhead", "--comet", "off",
                    "-k", "train_step,train_epoch", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    step, epoch = read_jsonl(results_path)
    assert (step["case"], epoch["case"]) == (STEP, EPOCH)
    assert step["variant"] == epoch["variant"] == "compile:reduce-overhead"
    assert step["params"]["mode"] == epoch["params"]["mode"] == "compile:reduce-overhead"
    assert step["compile_s"] is not None and step["compile_s"] >= 0
    # One batch shape, nothing else changing between steps: compiled once, also after the epoch; the print broke
    # the graph.
    assert step["metrics"]["compilations"] == 1 and epoch["metrics"]["compilations"] == 1
    assert step["metrics"]["graph_breaks"] >= 1
    assert "graph break(s)" in " ".join(result.stdout.split())


def test_a_compiler_failing_half_way_skips_the_compiled_cases_with_one_line(
        results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.frameworks.torch_compile as torch_compile

    def failing(fn: Callable[..., Any], mode: str, dynamic: bool) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            raise RuntimeError("C++ compile error: cc1plus: out of memory\nmore lines of the compiler's log")
        return call

    monkeypatch.setattr(torch_compile.torch, "compile", failing)
    result = invoke("mnist", "pytorch", *TINY, "--compile", "--comet", "off", "--results", str(results_path))
    assert "Traceback" not in result.output
    # The records written before the compile stay; the compiled cases are skipped, each in one line with the reason.
    assert [r["case"] for r in read_jsonl(results_path)] == [LOAD, *auto_cases_with_peak()]
    skipped = [line for line in result.stdout.splitlines() if "cc1plus" in line]
    assert skipped and all("more lines" not in line for line in skipped)
    assert f"skipped: pytorch {STEP} [compile:default]" in " ".join(result.stdout.split())


@pytest.mark.parametrize("args, allowed", [
    (("--compile", "fastest"), "'default', 'reduce-overhead', 'max-autotune'"),
])
def test_an_unknown_compile_mode_is_one_line_naming_the_allowed(args: tuple[str, ...], allowed: str,
                                                                results_path: Path) -> None:
    result = invoke("mnist", "pytorch", *TINY, *args, "--results", str(results_path))
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0 and allowed in result.stderr and "--compile" in result.stderr
    assert not results_path.exists()


@pytest.mark.parametrize("command", [("flax",), ("pytorch", "--devices", "2")])
def test_compile_is_refused_where_it_would_not_compile_the_step_asked(command: tuple[str, ...],
                                                                      results_path: Path) -> None:
    if "--devices" in command:
        from jax_benchmarks.hardware.devices import cpu_count

        if cpu_count() < 2:
            pytest.skip("needs 2 cores for --devices 2")
    result = invoke("mnist", *command, *TINY, "--compile", "--results", str(results_path))
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().count("\n") == 0 and "--compile" in result.stderr
    assert not results_path.exists()


def test_compile_is_refused_before_any_work_where_inductor_cannot_run(results_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("jax_benchmarks.mnist.pytorch_backend.inductor_refusal",
                        lambda kind: "inductor generates C++ on the CPU and finds no C++ compiler (g++ not found)")
    monkeypatch.setattr("jax_benchmarks.training.cases.read_data", lambda settings, log: pytest.fail("data was read"))
    result = invoke("mnist", "pytorch", *TINY, "--compile", "--results", str(results_path))
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: Invalid value for '--compile': inductor generates C++ on the CPU and "
                                     "finds no C++ compiler (g++ not found)")
    assert not results_path.exists()


def test_inductor_refusal_names_a_missing_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch._inductor import cpp_builder

    from jax_benchmarks.frameworks.torch_compile import inductor_refusal

    assert inductor_refusal("cpu") is None  # this machine has g++

    def no_compiler() -> str:
        # What inductor's search raises where none of its compilers is on PATH (a RuntimeError subclass).
        raise RuntimeError("No working C++ compiler found in torch._inductor.config.cpp.cxx: (None, 'g++')")

    # Replaced, not inductor's config: the search's results are cached for the rest of the process.
    monkeypatch.setattr(cpp_builder, "get_cpp_compiler", no_compiler)
    reason = inductor_refusal("cpu")
    assert reason is not None and reason.startswith("inductor generates C++ on the CPU and finds no C++ compiler")


@pytest.mark.e2e  # a real inductor build of the step (tens of seconds); twin: the eager-backend tests above
def test_inductor_compiles_the_step_once_and_a_side_effect_breaks_it(results_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The real inductor build (tens of seconds on a 2-core CPU): compiled once, one graph break from a print."""
    with_side_effect(monkeypatch)
    result = invoke("mnist", "pytorch", *TINY, "--compile", "--comet", "off", "-k", "train_step,train_epoch",
                    "--results", str(results_path))
    assert result.exit_code == 0, result.output
    step, epoch = read_jsonl(results_path)
    assert step["compile_s"] > 0 and step["metrics"]["compilations"] == 1
    assert step["metrics"]["graph_breaks"] >= 1 and epoch["metrics"]["compilations"] == 1


def test_a_round_of_a_compiled_run_is_compiled_in_the_same_mode() -> None:
    # `--rounds N` and the verdict start each round from the parsed settings (`command_line`).
    from jax_benchmarks.mnist.settings import MnistSettings
    from jax_benchmarks.settings import command_line

    args = command_line(MnistSettings(compile_mode="max-autotune", comet="off"))
    assert args[args.index("--compile") + 1] == "max-autotune"
    assert "--compile" not in command_line(MnistSettings(comet="off"))
