"""--profile: the untimed profiling pass of the measurement core, its trace files, the compiled program, the
breakdown of a trace, and what `report --baseline` says of compiled programs (measure/profile.py, compiled.py,
breakdown.py). Tiny cases, in process."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jax_benchmarks.frameworks.descriptors import Profiler, profiler_of
from jax_benchmarks.measure import profile as profile_module
from jax_benchmarks.measure.breakdown import STEP, breakdown_figures, breakdown_line, shares
from jax_benchmarks.measure.compiled import HASH_KEY, program_hash, program_note, program_text
from jax_benchmarks.measure.harness import Case, Target, Timed, run_cases
from jax_benchmarks.measure.memory import jax_program
from jax_benchmarks.measure.profile import ProfilePass
from jax_benchmarks.run import Run
from jax_benchmarks.store.jsonl import read_records
from jax_benchmarks.store.location import as_location
from jax_benchmarks.store.record import Record
from tests.conftest import invoke

# The backend whose framework has the profiler (its descriptor says which): NumPy has none of its own (cProfile).
BACKENDS = {"jax": "jax", "torch": "pytorch", "cprofile": "numpy"}


def profiled_step_function(x: Any) -> Any:
    """The step every framework's case calls: its name is what the cProfile text must list."""
    return x * 2.0 + 1.0


def step_of(framework: str) -> Timed[Any]:
    if framework == "jax":
        import jax
        import jax.numpy as jnp

        from jax_benchmarks.frameworks.descriptors import jax_sync

        jitted = jax.jit(profiled_step_function)
        x = jnp.ones((64, 64))
        return Timed(lambda: jitted(x), jax_sync, program=jax_program(jitted, x))
    if framework == "torch":
        import torch

        t = torch.ones(64, 64)
        return Timed(lambda: profiled_step_function(t))
    a = np.ones((64, 64))
    return Timed(lambda: profiled_step_function(a))


def profiled_run(tmp_path: Path, framework: str, timed: Timed[Any], environ: dict[str, str] | None = None,
                 profilers: Callable[[str], Profiler | None] = profiler_of) -> tuple[Record, list[str]]:
    results = tmp_path / "results.jsonl"
    lines: list[str] = []
    run = Run("test", results, log=lines.append)
    profiler = ProfilePass.of(as_location(results), run.run_id, profilers, run.log)
    if environ is not None:
        profiler.environ = environ
    run_cases(run, Target(BACKENDS[framework], "cpu"), [Case("step_64x64_float32", lambda: timed)], repeats=1,
              memory=False, min_time_s=0.01, profiler=profiler)
    [record] = read_records(results, pytest.fail)
    return record, lines


def events_of(path: Path) -> list[dict[str, Any]]:
    trace = json.loads(path.read_text())
    assert set(trace) <= {"traceEvents", "displayTimeUnit"}  # torch's host_name, traceName (a path) dropped
    events: list[dict[str, Any]] = trace["traceEvents"]
    return events


# torch.profiler's first start in a process takes ~5 s (Kineto's set-up; then ~1 ms): its real trace is e2e, its
# fast twin is test_a_torch_trace_keeps_only_its_events (the same writing path, the profiler replaced).
@pytest.mark.parametrize("framework", ["jax", pytest.param("torch", marks=pytest.mark.e2e)])
def test_a_framework_case_writes_a_chrome_trace_with_the_step_and_the_record_names_it(
        tmp_path: Path, framework: str) -> None:
    record, _ = profiled_run(tmp_path, framework, step_of(framework))
    assert record.median_s is not None and record.profile["profile_status"] == "measured"
    path = tmp_path / str(record.profile["trace"])
    assert path.is_file() and path.name.endswith(".trace.json")
    events = events_of(path)
    assert any(e.get("name") == STEP and e.get("ph") == "X" for e in events)
    if framework == "jax":  # the jitted step's XLA operation, named after its HLO op
        assert any("hlo_op" in (e.get("args") or {}) for e in events)
        assert isinstance(record.profile["share_kernels"], float)
    else:  # PyTorch's operators of the step: multiply and add
        assert {"aten::mul", "aten::add"} <= {e.get("name") for e in events}
        assert "share_kernels" not in record.profile  # no kernel events on the CPU: left out, not zero
    assert isinstance(record.profile["share_host"], float)


def test_a_torch_trace_keeps_only_its_events(tmp_path: Path) -> None:
    def kineto_like(step: Any, _scratch: Path) -> dict[str, Any]:
        step()
        return {"schemaVersion": 1, "host_name": "the-host", "traceName": "/home/someone/trace.json",
                "baseTimeNanoseconds": 1, "displayTimeUnit": "ms",
                "traceEvents": [x(STEP, 0, 100, 7, cat="user_annotation"), x("aten::mul", 10, 50, 7, cat="cpu_op")]}

    record, _ = profiled_run(tmp_path, "torch", step_of("cprofile"),
                             profilers=lambda _backend: Profiler("torch", kineto_like))
    path = tmp_path / str(record.profile["trace"])
    assert [e["name"] for e in events_of(path)] == [STEP, "aten::mul"]
    assert "the-host" not in path.read_text() and "someone" not in path.read_text()
    assert (record.profile["profiler"], record.profile["share_host"]) == ("torch", 100.0)


def test_a_numpy_case_writes_a_cprofile_text_listing_the_step_function(tmp_path: Path) -> None:
    record, _ = profiled_run(tmp_path, "cprofile", step_of("cprofile"))
    path = tmp_path / str(record.profile["trace"])
    text = path.read_text()
    assert "Ordered by: cumulative time" in text and "(profiled_step_function)" in text
    assert "share_host" not in record.profile  # a cProfile text has no breakdown


def test_a_jitted_case_keeps_its_compiled_program_hash_and_fusions(tmp_path: Path) -> None:
    record, _ = profiled_run(tmp_path, "jax", step_of("jax"))
    program = (tmp_path / str(record.profile["program"])).read_text()
    assert program.startswith("HloModule")
    assert record.profile[HASH_KEY] == hashlib.sha256(program_text(program).encode()).hexdigest()
    assert record.profile["fusions"] == 1  # x * 2 + 1: one loop fusion
    assert record.profile["xla_flags"] is not None


def test_a_failing_profiler_is_one_line_and_the_timed_figures_are_recorded(tmp_path: Path) -> None:
    def broken(*_: object) -> dict[str, Any]:
        raise RuntimeError("the profiler plugin crashed\nsecond line")

    record, lines = profiled_run(tmp_path, "jax", step_of("jax"), profilers=lambda _backend: Profiler("jax", broken))
    assert record.median_s is not None and record.repeats >= 1
    assert record.profile["profile_status"] == "unavailable: RuntimeError: the profiler plugin crashed"
    [line] = [line for line in lines if line.startswith("--profile:")]
    assert "no trace" in line and "second line" not in line and "timed figures are recorded" in line


def test_a_trace_holding_a_secret_is_not_written(tmp_path: Path) -> None:
    # The cProfile text names the step's function: an environment variable named like a secret holds that text.
    record, lines = profiled_run(tmp_path, "cprofile", step_of("cprofile"),
                                 environ={"MY_API_TOKEN": "profiled_step_function"})
    assert "trace" not in record.profile
    assert "environment variable named like a secret" in str(record.profile["profile_status"])
    assert not list((tmp_path / "profiles").rglob("*.txt"))
    assert not any("profiled_step_function" in line for line in lines)


def test_a_trace_holding_the_stores_password_is_refused(tmp_path: Path) -> None:
    profiler = ProfilePass.of(as_location("postgresql://bench:profiled_step_function@db.example/results"), "r1",
                              profiler_of, print)
    with pytest.raises(profile_module.TraceRefused, match="password"):
        profiler.write(tmp_path / "trace.txt", "... profiled_step_function ...")
    assert not (tmp_path / "trace.txt").exists()


def test_work_done_once_is_not_called_again(tmp_path: Path) -> None:
    calls: list[int] = []
    record, _ = profiled_run(tmp_path, "cprofile", Timed(lambda: calls.append(1), once=True))
    assert calls == [1]
    assert str(record.profile["profile_status"]).startswith("not profiled")


def test_an_unwritable_profile_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "profiles").write_text("a file where the folder would go")
    results = tmp_path / "results.jsonl"
    result = invoke("xla", "numpy", "--quick", "--profile", "--results", str(results))
    assert result.exit_code == 2
    assert "--profile" in result.stderr and "cannot write profiles" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not results.exists()


# ------------------------------------------------------------- breakdown ---

def x(name: str, ts: float, dur: float, tid: int, **extra: Any) -> dict[str, Any]:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid, **extra}


SYNTHETIC = {"displayTimeUnit": "ns", "traceEvents": [
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "python"}},
    x(STEP, 0, 1000, 1),
    x("dispatch", 0, 100, 1),                       # host
    x("fusion", 100, 300, 2, args={"hlo_op": "fusion"}),
    x("dot", 350, 250, 2, args={"hlo_op": "dot"}),  # overlaps the fusion: kernels 100..600 = 500 µs
    x("Memcpy HtoD", 550, 150, 3, cat="gpu_memcpy"),  # data movement where no kernel runs: 600..700 = 100 µs
    x("cudaDeviceSynchronize", 300, 600, 1),        # a wait: idle where nothing else runs, 700..900 = 200 µs
    x("before the step", -500, 400, 2, args={"hlo_op": "dot"}),  # outside the step: not counted
]}                                                  # host: the rest, 0..100 and 900..1000 = 200 µs


def test_the_breakdown_of_a_synthetic_trace_has_the_known_shares() -> None:
    found = shares(SYNTHETIC)
    assert found == pytest.approx({"kernels": 0.5, "data_movement": 0.1, "host": 0.2, "idle": 0.2, "step_s": 0.001})
    figures = breakdown_figures(SYNTHETIC)
    assert (figures["share_kernels"], figures["share_host"], figures["share_data_movement"],
            figures["share_idle"]) == (50.0, 20.0, 10.0, 20.0)


def test_a_share_without_events_is_left_out_never_zero() -> None:
    cpu_ops = {"traceEvents": [x(STEP, 0, 100, 1), x("aten::mm", 10, 80, 1, cat="cpu_op")]}
    figures = breakdown_figures(cpu_ops)
    assert "share_kernels" not in figures and "share_data_movement" not in figures and "share_idle" not in figures
    assert figures["share_host"] == 100.0
    line = breakdown_line("pytorch", figures)
    assert line == "pytorch: host 100.0 % (kernels, data movement, idle: no such events in the trace, left out)"


def test_a_trace_without_the_step_has_no_breakdown() -> None:
    figures = breakdown_figures({"traceEvents": [x("aten::mm", 10, 80, 1)]})
    assert set(figures) == {"breakdown_status"}
    assert breakdown_line("pytorch", figures) is None


# ------------------------------------------------------ compiled programs ---

HLO = """HloModule jit_f, is_scheduled=true

FileNames
1 "{file}"

StackFrames
1 {{file_location_id=1 parent_frame_id=1}}

ENTRY %main.1 (x.1: f32[100]) -> f32[100] {{
  %x.1 = f32[100]{{0}} parameter(0), metadata={{op_name="x"}}
  ROOT %{op}_fusion = f32[100]{{0}} fusion(%x.1), kind=kLoop, calls=%fused, metadata={{op_name="jit(f)/{op}"}}
}}
"""


def hlo(op: str, file: str = "a.py") -> str:
    return HLO.format(op=op, file=file)


def record_with(run_id: str, case: str, text: str) -> Record:
    return Record(run_id=run_id, timestamp="2026-11-27T00:00:00+00:00", group="xla", backend="jax", case=case,
                  device="cpu", profile={HASH_KEY: program_hash(text)})


def test_the_hash_ignores_source_locations_and_sees_instructions() -> None:
    assert program_hash(hlo("sine", file="a.py")) == program_hash(hlo("sine", file="moved/b.py"))
    assert program_hash(hlo("sine")) != program_hash(hlo("cosine"))


def test_a_changed_program_is_named_and_an_unchanged_one_is_not() -> None:
    before = [record_with("r1", "matmul_10_float32", hlo("dot")), record_with("r1", "mean_10_float32", hlo("add"))]
    now = [record_with("r2", "matmul_10_float32", hlo("dot_general")), record_with("r2", "mean_10_float32", hlo("add"))]
    note = program_note(now, before)
    assert note is not None
    changed, same = note.splitlines()
    assert "different code" in changed and "jax matmul_10_float32 @cpu" in changed and "mean" not in changed
    assert same == "same code (compiled-program hash unchanged): 1 case(s)"
    assert program_note(before, before) == ("same code (compiled-program hash unchanged): 2 case(s): "
                                           "jax matmul_10_float32 @cpu, jax mean_10_float32 @cpu")
    assert program_note(now, [Record(**{**b.model_dump(), "profile": {}}) for b in before]) is None


def test_a_verdict_finding_shows_its_frameworks_breakdowns_side_by_side() -> None:
    from jax_benchmarks.verdict.findings import Finding
    from jax_benchmarks.verdict.page import finding_item

    def timed(backend: str, profile: dict[str, Any]) -> Record:
        return Record(run_id="r1", timestamp="2026-11-27T00:00:00+00:00", group="xla", backend=backend,
                      case="matmul_10_float32", device="cpu", median_s=0.01, profile=profile)

    records = (timed("jax", {"share_kernels": 91.0, "share_host": 6.0, "share_idle": 3.0}),
               timed("pytorch", {"share_host": 100.0}), timed("numpy", {}))
    finding = Finding("linear-algebra-matmul", "matmul", "JAX is faster.", "found", ("r1",), ("matmul_10_float32",),
                      records=records)
    page = finding_item(finding, ())
    assert "jax matmul_10_float32: kernels 91.0 %, host 6.0 %, idle 3.0 % (data movement: no such" in page
    assert "pytorch matmul_10_float32: host 100.0 % (kernels, data movement, idle: no such" in page
    assert "numpy" not in page
    assert "--profile" not in finding_item(Finding("k", "t", "s", "found", ("r1",), (), records=records[2:]), ())


def test_a_file_name_is_the_case_in_plain_characters() -> None:
    assert profile_module.file_stem("pytorch", "grad_100_float32 [backward(sum)]", "cpu", 1) == \
        "pytorch-grad_100_float32_backward_sum-cpu-round1"
    assert profile_module.file_stem("jax", "../../etc/passwd", "gpu", None) == "jax-.._.._etc_passwd-gpu"
