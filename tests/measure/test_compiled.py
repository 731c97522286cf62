"""--profile and torch.compile: the code inductor generated for a compiled case, in a file beside the trace, its hash
and dynamo's graph breaks in the record, and `report --baseline` naming a case whose generated code changed.

Inductor's C++ build takes tens of seconds a compile on this 2-core CPU: the default suite's tests hand the watch the
code the way inductor does (its `save_output_code` hook) or trace with dynamo's eager backend; the tests that compile
with inductor itself, in fresh processes, are e2e."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.frameworks.descriptors import Profiler, watch_torch_code
from jax_benchmarks.measure.breakdown import STEP
from jax_benchmarks.measure.compiled import HASH_KEY, generated_hash
from jax_benchmarks.measure.harness import Case, Target, Timed, run_cases
from jax_benchmarks.measure.profile import ProfilePass, set_environment
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records
from jax_benchmarks.store.location import as_location
from jax_benchmarks.store.record import Record
from tests.conftest import invoke
from tests.report.fixtures import record, samples, write_results

torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]

# The shape of inductor's CPU wrapper: comment lines that change from compile to compile (the AOT ID counts the
# graphs compiled before in the process; the kernel's path names the cache folder), a C++ kernel whose preprocessor
# lines are code, and the Python that calls it.
INDUCTOR = """# AOT ID: ['{aot}_inference']
import torch
# kernel path: /tmp/torchinductor_{user}/zt/cztly2v3fjq.py
cpp_fused_add_sin_0 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
#include <torch/csrc/inductor/cpp_prefix.h>
#pragma omp parallel num_threads({threads})
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
{{
    auto tmp1 = {op}(in_ptr0[0]);
}}
''')
def call(args):
    buf0 = empty_strided_cpu((10, ), (1, ), torch.float32)  # reuse
    cpp_fused_add_sin_0(args[0], buf0)
    return (buf0, )
"""


def inductor(op: str = "std::sin", aot: int = 0, user: str = "root", threads: int = 2) -> str:
    return INDUCTOR.format(op=op, aot=aot, user=user, threads=threads)


def test_the_generated_code_hash_leaves_out_comments_and_cache_paths_and_sees_the_code() -> None:
    assert generated_hash(inductor(aot=0, user="root")) == generated_hash(inductor(aot=3, user="someone"))
    assert generated_hash(inductor(op="std::sin")) != generated_hash(inductor(op="std::cos"))
    # A C++ preprocessor line is code, not a comment.
    assert generated_hash(inductor(threads=2)) != generated_hash(inductor(threads=1))


def kineto_like(step: Callable[[], None], _scratch: Path) -> dict[str, Any]:
    """A torch trace without Kineto (its first start in a process takes ~5 s)."""
    step()
    return {"traceEvents": [{"name": STEP, "ph": "X", "ts": 0, "dur": 100, "pid": 1, "tid": 1}]}


def profiled_torch_run(tmp_path: Path, cases: list[Case[Any]]) -> list[Record]:
    results = tmp_path / "results.jsonl"
    run = Run("test", results, log=lambda _line: None)
    profiler = ProfilePass.of(as_location(results), run.run_id,
                              lambda _backend: Profiler("torch", kineto_like, watch=watch_torch_code), run.log)
    run_cases(run, Target("pytorch", "cpu"), cases, repeats=1, memory=False, min_time_s=0.01, profiler=profiler)
    return list(read_records(results, pytest.fail)) if results.exists() else []


def test_a_compiled_torch_case_names_its_generated_code_file_and_keeps_its_hash(tmp_path: Path) -> None:
    from torch._inductor.graph import GraphLowering

    hook_before = GraphLowering.save_output_code
    forward, backward = inductor(), inductor(op="std::cos")
    compiled_once: list[bool] = []

    def step() -> None:
        if not compiled_once:  # the first call compiles: inductor hands its code to the hook, as after a compile
            compiled_once.append(True)
            for code in (forward, backward):
                assert GraphLowering.save_output_code is not None
                GraphLowering.save_output_code(code)

    compiled, eager = profiled_torch_run(tmp_path, [Case("f_10_float32", lambda: Timed(step), variant="compile",
                                                         compiled=True),
                                                    Case("f_10_float32", lambda: Timed(step), variant="eager")])
    assert GraphLowering.save_output_code is hook_before  # the hook is put back
    profile = compiled.profile
    path = tmp_path / str(profile["program"])
    assert path.is_file() and path.name == "pytorch-f_10_float32_compile-cpu.inductor.py"
    text = path.read_text()
    assert forward in text and backward in text and text.index(forward) < text.index(backward)
    assert profile[HASH_KEY] == generated_hash(text)
    assert (profile["program_status"], profile["graph_breaks"], profile["generated_modules"]) == ("measured", 0, 2)
    assert compiled.compile_s is not None
    # An eager case compiles nothing and says nothing of a program.
    assert not {"program", "program_status", HASH_KEY} & set(eager.profile)


def test_a_compiled_case_that_cannot_run_stops_the_watch(tmp_path: Path) -> None:
    from torch._inductor.graph import GraphLowering

    hook_before = GraphLowering.save_output_code

    def no_compiler() -> None:
        raise OSError("no C++ compiler")

    records = profiled_torch_run(tmp_path, [Case("f_10_float32", lambda: Timed(no_compiler), variant="compile",
                                                 compiled=True, cannot_run=(OSError,))])
    assert records == [] and GraphLowering.save_output_code is hook_before


def test_a_compiled_case_without_generated_code_says_why_and_counts_its_graph_breaks(tmp_path: Path) -> None:
    def f(x: Any) -> Any:
        print("a side effect dynamo cannot trace: a graph break")
        return x * 2.0

    # dynamo's eager backend traces and breaks the graph as inductor's would, and generates no code
    traced = torch.compile(f, backend="eager", dynamic=False)
    x = torch.ones(4)
    [compiled] = profiled_torch_run(tmp_path, [Case("f_4_float32", lambda: Timed(lambda: traced(x)),
                                                    variant="compile", compiled=True)])
    status = str(compiled.profile["program_status"])
    assert status.startswith("not captured: inductor generated no code while the case ran")
    assert HASH_KEY not in compiled.profile and "program" not in compiled.profile
    graph_breaks = compiled.profile["graph_breaks"]
    assert isinstance(graph_breaks, int) and graph_breaks >= 1


TS_OLD, TS_NEW = "2025-01-01T10:00:00+00:00", "2025-01-02T10:00:00+00:00"
OLD, NEW = "20250101T100000Z-aaaaaa", "20250102T100000Z-bbbbbb"


def torch_case(run_id: str, timestamp: str, case: str, code: str) -> Record:
    return record(run_id, timestamp, "jit", "pytorch", case, samples(1e-3), variant="compile",
                  profile={"program_status": "measured", HASH_KEY: generated_hash(code), "graph_breaks": 0})


@pytest.mark.parametrize("changed", [True, False])
def test_report_baseline_names_a_torch_case_whose_generated_code_changed(results_path: Path, changed: bool) -> None:
    # the second run's code differs only in what two compiles of one program differ in, or also in a kernel
    later = inductor(op="std::cos" if changed else "std::sin", aot=5, user="someone")
    write_results(results_path, [torch_case(OLD, TS_OLD, "f_10000_float32", inductor()),
                                 torch_case(OLD, TS_OLD, "f_100000_float32", inductor()),
                                 torch_case(NEW, TS_NEW, "f_10000_float32", later),
                                 torch_case(NEW, TS_NEW, "f_100000_float32", inductor())])
    result = invoke("report", "--results", str(results_path), "--baseline", "previous")
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    if changed:
        assert ("the compiler produced different code (compiled-program hash changed) for 1 case(s): "
                "pytorch f_10000_float32 [compile] @cpu") in out
        assert "same code (compiled-program hash unchanged): 1 case(s)" in out
    else:
        assert "different code" not in out
        assert ("same code (compiled-program hash unchanged): 2 case(s): pytorch f_10000_float32 [compile] @cpu, "
                "pytorch f_100000_float32 [compile] @cpu") in out


def test_profile_sets_kinetos_log_level_before_the_backend_loads_keeping_the_users(
        results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import jax_benchmarks.cli.commands as commands

    seen: list[str | None] = []
    real = commands.load_backend

    def loading(spec: Any) -> Any:
        seen.append(os.environ.get("KINETO_LOG_LEVEL"))
        return real(spec)

    monkeypatch.setattr(commands, "load_backend", loading)
    for users in (None, "3"):
        monkeypatch.setenv("KINETO_LOG_LEVEL", users or "unset below")  # put back after the test
        if users is None:
            monkeypatch.delenv("KINETO_LOG_LEVEL")
        result = invoke("xla", "numpy", "--quick", "--profile", "-k", "sum", "--results", str(results_path))
        assert result.exit_code == 0, result.output
    assert seen == ["6", "3"]
    # without --profile, nothing is set
    monkeypatch.delenv("KINETO_LOG_LEVEL")
    assert invoke("xla", "numpy", "--quick", "-k", "sum", "--results", str(results_path)).exit_code == 0
    assert seen[-1] is None


def test_a_profilers_environment_keeps_a_value_the_user_set() -> None:
    environ = {"KINETO_LOG_LEVEL": "2"}
    set_environment([None, Profiler("torch", kineto_like, environment={"KINETO_LOG_LEVEL": "6", "OTHER": "x"})],
                    environ)
    assert environ == {"KINETO_LOG_LEVEL": "2", "OTHER": "x"}


# --------------------------------------------------------------- e2e: inductor itself, in fresh processes ---

HASH_OF_COMPILE = """
import sys, torch
from jax_benchmarks.frameworks.torch_compile import watch_generated_code
from jax_benchmarks.measure.compiled import generated_hash

def f(x):
    return 0.2 * x + torch.sin(x) + torch.cos(2 * x)

def g(x):
    return 0.2 * x + torch.sin(x) + torch.cos(3 * x)

for fn in (f, g):
    watched = watch_generated_code()
    torch.compile(fn, dynamic=False)(torch.ones(100))
    print(generated_hash(watched().text()))
"""


def fresh_env(**more: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO / "src"), **more}


@pytest.mark.e2e
def test_two_fresh_compiles_of_one_function_hash_alike_and_a_changed_function_does_not(tmp_path: Path) -> None:
    # Inductor's caches off: each process compiles afresh (the on-disk cache would hand both the same file).
    env = fresh_env(TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    processes = [subprocess.Popen([sys.executable, "-c", HASH_OF_COMPILE], env=env, cwd=tmp_path, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outputs = [process.communicate(timeout=600) for process in processes]
    assert all(process.returncode == 0 for process in processes), [err for _, err in outputs]
    (f_first, g_first), (f_second, g_second) = (out.split() for out, _ in outputs)
    assert f_first == f_second and g_first == g_second
    assert f_first != g_first


@pytest.mark.e2e
def test_a_profiled_torch_compile_case_records_its_generated_code_and_prints_no_kineto_line(tmp_path: Path) -> None:
    env = fresh_env()
    env.pop("KINETO_LOG_LEVEL", None)
    done = subprocess.run([sys.executable, str(REPO / "main.py"), "jit", "pytorch", "--quick", "--profile",
                           "-k", "f_10000_float32", "--results", str(tmp_path / "results.jsonl")],
                          env=env, cwd=tmp_path, text=True, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "USDT" not in done.stderr and "profiler_start" not in done.stderr
    by_variant = {r["variant"]: r["profile"] for r in map(json.loads, (tmp_path / "results.jsonl").open())}
    compiled = by_variant["compile"]
    code = (tmp_path / compiled["program"]).read_text()
    assert "def call(" in code and compiled[HASH_KEY] == generated_hash(code)
    assert (compiled["graph_breaks"], compiled["generated_modules"]) == (0, 1)
    assert "program" not in by_variant["eager"]
