"""One descriptor per framework (frameworks/descriptors.py): the shared modules read the registered descriptors and
name no framework. A stand-in CuPy descriptor (tests/xla/test_new_backend.py's stand-in `cupy` module under it) is
registered, and every shared module that needs a framework's facts (availability, versions in the environment
record, threads, seeding, sync, memory probe, precision policy, the verdict's "JAX" side) is seen using it.
src/ is then read for each framework's import names: they are found only in the framework's own code."""

from __future__ import annotations

import ast
import functools
import os
import re
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, prepared_environment
from jax_benchmarks.frameworks import descriptors
from jax_benchmarks.frameworks.arrays import NumpyArrays
from jax_benchmarks.frameworks.available import Framework, missing_libraries
from jax_benchmarks.frameworks.descriptors import FrameworkDescriptor, is_out_of_memory, registered
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.hardware import environment, gpu_policy, threads
from jax_benchmarks.hardware.devices import DeviceKind
from jax_benchmarks.measure.memory import DevicePeak, Probe
from jax_benchmarks.measure.timing import Sync, measure
from jax_benchmarks.report import envdiff, history
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.xla.settings import XlaSettings
from tests.xla.test_new_backend import stand_in_cupy

SRC = Path(__file__).resolve().parents[2] / "src" / "jax_benchmarks"


@dataclass
class Calls:
    """What the shared modules asked of the stand-in framework."""

    seeds: list[int] = field(default_factory=list)
    pinned: list[int] = field(default_factory=list)
    synced: int = 0
    precisions: list[str] = field(default_factory=list)
    prepared: int = 0


class StandInPeak(DevicePeak):
    def stop(self) -> dict[str, Scalar]:
        return {"device_status": "measured", "device_peak_bytes": 123}


class StandInArrays(NumpyArrays):
    def __init__(self, calls: Calls) -> None:
        super().__init__()
        self.calls = calls

    @property
    def sync(self) -> Sync:
        def wait(_result: object) -> None:
            self.calls.synced += 1
        return wait


def stand_in(calls: Calls) -> FrameworkDescriptor:
    """A CuPy descriptor whose every function says it was called."""

    @contextmanager
    def precision(name: str) -> Iterator[None]:
        calls.precisions.append(name)
        yield

    def pin(module: Any, n: int) -> list[str]:
        calls.pinned.append(n)
        return [f"{module.__name__} kept its pool"]

    def thread_environment(n: int, _environ: Mapping[str, str]) -> dict[str, str]:
        return {"CUPY_STAND_IN_THREADS": str(n)}

    def device(kind: DeviceKind) -> str:
        return f"cupy:{kind}"

    def prepare(environ: MutableMapping[str, str]) -> str:
        calls.prepared += 1
        environ.setdefault("CUPY_STAND_IN_CACHE", "off")
        return f"cache {environ['CUPY_STAND_IN_CACHE']}"

    return FrameworkDescriptor(
        label="CuPy", imports=("cupy",), distributions=("cupy",), needs=(Framework("cupy", "CuPy", "cupy"),),
        backends=("cupy",), counts_as_jax=True,
        thread_environment=thread_environment, threads_fixed_when_loaded="its pools keep their size",
        pin_threads=pin, thread_state=lambda module: {"cupy_threads": 3 if module is not None else None},
        thread_keys=("cupy_threads",), recorded_variables=(("cupy_flags", "CUPY_STAND_IN_FLAGS"),),
        prepare_environment=prepare, prepared_setting="cupy_cache",
        prepared_label="CuPy cache", setting_keys=("cupy_cache", "cupy_precision"),
        seed=calls.seeds.append, device=device, sync=lambda _device: StandInArrays(calls).sync,
        device_memory=StandInPeak, arrays=lambda _kind: StandInArrays(calls), precision=precision,
        loaded_settings=lambda module: {"cupy_precision": f"{module.__name__} default"},
        out_of_memory=lambda exc: isinstance(exc, MemoryError) and "cupy" in str(exc),
    )


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """The stand-in registered after the real descriptors, its module loaded, its version 13.0.0."""
    recorded = Calls()
    monkeypatch.setattr(descriptors, "DESCRIPTORS", (*descriptors.DESCRIPTORS, stand_in(recorded)))
    monkeypatch.setitem(sys.modules, "cupy", stand_in_cupy())
    real_version = environment._version
    monkeypatch.setattr(environment, "_version", lambda dist: "13.0.0" if dist == "cupy" else real_version(dist))
    environment._fixed_environment.cache_clear()
    yield recorded
    environment._fixed_environment.cache_clear()


def test_a_registered_framework_is_available_when_installed(calls: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    cupy = registered()[-1]
    assert missing_libraries(*cupy.needs) == ()
    monkeypatch.setitem(sys.modules, "cupy", None)  # not installed
    assert [library.label for library in missing_libraries(*cupy.needs)] == ["CuPy"]
    assert not cupy.loaded()


def test_its_version_is_recorded_compared_and_shown(calls: Calls) -> None:
    env = environment.environment()
    assert env["cupy"] == "13.0.0"
    assert envdiff.framework_changes({**env, "cupy": "13.1.0"}, env) == ["cupy 13.0.0 → 13.1.0"]
    assert "cupy: 13.0.0 → 13.1.0" in envdiff.differences({**env, "cupy": "13.1.0"}, env)
    assert "cupy" in history.version_keys()
    assert "cupy" in descriptors.header_versions()


def test_its_threads_are_set_pinned_and_read_back(calls: Calls, monkeypatch: pytest.MonkeyPatch) -> None:
    assert threads.framework_environment(2, {})["CUPY_STAND_IN_THREADS"] == "2"
    assert "CuPy was already loaded: its pools keep their size" in threads.set_before_import(2)
    assert "cupy kept its pool" in threads.pin_loaded(2) and calls.pinned == [2]
    assert threads.thread_state()["cupy_threads"] == 3
    for descriptor in registered():  # none loaded: each one's variables are set before its import
        for name in descriptor.imports:
            monkeypatch.setitem(sys.modules, name, None) if descriptor.thread_environment else None
    monkeypatch.setattr(os, "environ", {})  # the process's own environment stays as it is
    assert threads.set_before_import(3) == []
    assert os.environ["CUPY_STAND_IN_THREADS"] == "3" and os.environ["NPROC"] == "3"


def test_it_is_seeded_and_its_settings_recorded(calls: Calls) -> None:
    RNG_Provider(11)
    assert calls.seeds == [11]
    assert environment.loaded_framework_settings()["cupy_precision"] == "cupy default"


def test_its_threads_variables_and_settings_are_recorded_and_compared(calls: Calls,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUPY_STAND_IN_FLAGS", "--fast")
    env = {**environment.environment(), "cupy_cache": "cache off"}
    assert env["cupy_threads"] == 3 and env["cupy_precision"] == "cupy default" and env["cupy_flags"] == "--fast"
    changed = {**env, "cupy_threads": 1, "cupy_flags": None, "cupy_cache": "cache on", "cupy_precision": "tf32"}
    assert [line for line in envdiff.differences(changed, env) if line.startswith("cupy_")] == [
        "cupy_threads: 3 → 1", "cupy_flags: --fast → default", "cupy_cache: cache off → cache on",
        "cupy_precision: cupy default → tf32"]
    assert "cupy_flags" in history.version_keys()  # a change of its flags labels a run
    # What it was prepared with before its import is a setting a gate does not judge across.
    assert envdiff.setting_differences(changed, env) == ["cupy_cache: cache off → cache on"]
    # A run that did not import it was not prepared for it: nothing to compare, no 'not recorded'.
    without = {key: value for key, value in env.items() if key != "cupy_cache"}
    assert not [line for line in envdiff.differences(without, env) + envdiff.differences(env, without)
                if line.startswith("cupy_cache")]


def test_it_prepares_the_environment_before_a_run_that_imports_it(calls: Calls,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    environ: dict[str, str] = {}
    monkeypatch.setattr(os, "environ", environ)
    cupy = registered()[-1]
    group = GroupSpec("xla", "", {"cupy": BackendSpec("cupy_example_backend", "CuPy.", XlaSettings, needs=cupy.needs),
                                  "numpy": BackendSpec("numpy_example_backend", "NumPy.", XlaSettings)})
    assert "cupy_cache" not in prepared_environment(group, ["numpy"]) and calls.prepared == 0
    assert prepared_environment(group, ["numpy", "cupy"])["cupy_cache"] == "cache off" and calls.prepared == 1
    assert environ["CUPY_STAND_IN_CACHE"] == "off"


def test_the_run_header_on_a_gpu_names_it_and_what_it_was_prepared_with(calls: Calls,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from jax_benchmarks.cli.console import print_run_header

    on_a_gpu = {**environment.environment(), "gpu": "NVIDIA H100"}
    monkeypatch.setattr(environment, "environment", lambda: on_a_gpu)
    run = SimpleNamespace(run_id="r1", settings_env={"precision": "tf32", "conv_autotune": True,
                                                      "jax_gpu_memory": "on demand", "cupy_cache": "cache off"})
    console = Console(record=True, width=400)
    print_run_header(console, run, XlaSettings())  # type: ignore[arg-type]  # a stand-in Run
    policy = console.export_text().splitlines()[-1]
    assert policy == ("GPU policy (JAX, PyTorch and CuPy alike): float32 products and convolutions in tf32 · "
                      "convolution autotuning on · JAX GPU memory on demand · CuPy cache cache off")


def test_each_descriptor_declares_the_keys_its_records_carry() -> None:
    """What `thread_state` and `loaded_settings` record, and what `prepare_environment` said, are the keys the
    descriptor declares (report/envdiff.py compares those alone)."""
    # Loaded, so that their settings are read (the suite's earlier groups have loaded both already).
    import jax  # noqa: F401
    import torch  # noqa: F401

    for descriptor in registered():
        module = descriptor.module()
        if descriptor.thread_state is not None:
            assert set(descriptor.thread_state(module)) <= set(descriptor.thread_keys), descriptor.label
        if descriptor.loaded_settings is not None:
            assert module is not None, descriptor.label
            assert set(descriptor.loaded_settings(module)) <= set(descriptor.setting_keys), descriptor.label
        if descriptor.prepare_environment is not None:
            assert descriptor.prepared_setting in descriptor.setting_keys, descriptor.label
            assert descriptor.prepared_label, descriptor.label
    assert {"xla_threads", "torch_threads"} <= set(envdiff.compared_keys())
    assert {"jax_gpu_memory", "jax_matmul_precision", "torch_matmul_precision"} <= set(envdiff.compared_keys())


def test_the_measurement_core_waits_with_its_sync_and_reads_its_memory_probe(calls: Calls) -> None:
    cupy = registered()[-1]
    spec = BackendSpec("cupy_example_backend", "CuPy.", XlaSettings, needs=cupy.needs, device_memory=cupy.device_memory)
    assert cupy.arrays is not None and cupy.device is not None
    arrays = cupy.arrays("gpu")
    x = arrays.to_device(np.ones(4))
    done = measure(lambda: x * 2, cupy.sync(cupy.device("gpu")), repeats=2, warmup=1, min_time_s=0.0)
    assert done.repeats >= 2 and calls.synced >= 4  # the first call, the warm-up and every sample waited
    probe = Probe.of(spec.device_memory, "cupy", "gpu")
    assert isinstance(probe.device, StandInPeak)
    assert probe.device.stop()["device_peak_bytes"] == 123


def test_its_out_of_memory_error_ends_a_run_in_one_line(calls: Calls) -> None:
    assert is_out_of_memory(MemoryError("cupy: out of memory allocating 8 GiB"))
    assert not is_out_of_memory(MemoryError("the host"))


def test_the_gpu_policy_and_the_verdicts_jax_side_read_it(calls: Calls) -> None:
    with gpu_policy.applied("tf32", ["cupy"]):
        assert calls.precisions == ["tf32"]
    with gpu_policy.applied("float32", ["numpy"]):  # not named: not applied
        pass
    assert calls.precisions == ["tf32"]
    assert "cupy" in descriptors.jax_backends()


# ------------------------------------------------------------------ where frameworks are named in src/ ---

# NumPy is the core dependency every module may import; the others are optional frameworks.
CORE = {"numpy"}
# A framework's own code, which names it by design: each group's backend modules and cli.py entries, the shared
# training room's trainer per framework (training/flax_trainer.py, training/pytorch_trainer.py: the backend code
# that mnist, jit and autograd share), and the descriptor module itself.
OWN = ("*_backend.py", "*/cli.py", "training/*_trainer.py", "frameworks/descriptors.py")
ALLOWED = {
    # the example function of jit and autograd, one module per framework, imported only by its backends
    "example_function/in_jax.py", "example_function/in_torch.py",
    # helpers of one framework, imported only by its backends: torch.compile's, Flax's parameters, typed jax.jit
    "frameworks/torch_compile.py", "frameworks/flax_params.py", "frameworks/typed.py",
    # mnist's Flax processes and the multi-process runtimes of JAX and PyTorch: mnist's backend code in more files
    # than one
    "mnist/flax_processes.py", "mnist/distributed.py",
    # XLA's own flags, which only JAX reads: whether JAX is loaded decides whether they can still be set
    "hardware/xla_flags.py",
}


@functools.cache
def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), str(path))


def may_name(path: Path, names: set[str]) -> bool:
    """Whether the text could name one of `names` as `named_frameworks` finds them (parsing every module of
    src/ takes seconds; most name none of them)."""
    quoted = "|".join(re.escape(name) for name in sorted(names))
    pattern = rf"^\s*(import|from)\s+({quoted})\b|sys\.modules|[\"']({quoted})[\"']"
    return re.search(pattern, path.read_text(), flags=re.MULTILINE) is not None


def import_names() -> set[str]:
    return {name for d in registered() for name in d.imports + d.distributions} - CORE


def is_sys_modules(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "modules" and isinstance(node.value, ast.Name)
            and node.value.id == "sys")


def sys_modules_key(node: ast.AST) -> object:
    """The constant looked up in `sys.modules["x"]`, `sys.modules.get("x")` or `"x" in sys.modules`, else None."""
    if isinstance(node, ast.Subscript) and is_sys_modules(node.value) and isinstance(node.slice, ast.Constant):
        return node.slice.value
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_sys_modules(node.func.value)
            and node.args and isinstance(node.args[0], ast.Constant)):
        return node.args[0].value
    if (isinstance(node, ast.Compare) and any(is_sys_modules(side) for side in node.comparators)
            and isinstance(node.left, ast.Constant)):
        return node.left.value
    return None


def named_frameworks(tree: ast.Module, names: set[str]) -> list[str]:
    """'import torch' (line), 'sys.modules "jax"', 'list of ("numpy", "jax", ...)': where a module names one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"import {a.name} ({node.lineno})" for a in node.names if a.name.split(".")[0] in names]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in names:
            found.append(f"from {node.module} ({node.lineno})")
        elif (looked_up := sys_modules_key(node)) in names:
            found.append(f"sys.modules {looked_up!r} ({node.lineno})")
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            listed = [n.value for n in node.elts if isinstance(n, ast.Constant) and n.value in names | CORE]
            if len(listed) >= 2:  # a hand-written list of frameworks
                found.append(f"list of {listed} ({node.lineno})")
    return found


def test_the_checker_finds_each_way_of_naming_a_framework() -> None:
    source = ("import torch.nn\nfrom jax import numpy\nimport sys\nsys.modules.get('flax') is None\n"
              "LIBS = ('numpy', 'optax')\nimport jax_benchmarks\nx = 'jax'\n'torch' in sys.modules\n"
              "sys.modules['jax']\n")
    assert sorted(named_frameworks(ast.parse(source), {"torch", "jax", "flax", "optax"})) == [
        "from jax (2)", "import torch.nn (1)", "list of ['numpy', 'optax'] (5)",
        "sys.modules 'flax' (4)", "sys.modules 'jax' (9)", "sys.modules 'torch' (8)"]


def test_src_names_each_framework_only_in_its_own_code() -> None:
    names = import_names()
    assert {"jax", "jaxlib", "torch", "flax", "optax", "scipy"} <= names
    named = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        if any(relative.match(pattern) for pattern in OWN) or relative.as_posix() in ALLOWED:
            continue
        found = named_frameworks(parsed(path), names) if may_name(path, names) else []
        if found:
            named[relative.as_posix()] = found
    assert named == {}


def test_every_allowed_module_still_names_a_framework() -> None:
    """An entry that no longer names one is stale: the list says only what must stay."""
    names = import_names()
    stale = [p for p in sorted(ALLOWED) if not named_frameworks(parsed(SRC / p), names)]
    assert stale == []


# What a framework's records carry is named by its descriptor (thread counts, the variables it reads, its settings);
# a shared module that spells one of those keys (or the variable) by hand names the framework too. These still do:
KEYS_ALLOWED = {
    # XLA's own flags (allowed above): it sets XLA_FLAGS itself
    "hardware/xla_flags.py",
    # --profile's compiled program records the XLA_FLAGS it was compiled under (the profile2 helper's module)
    "measure/compiled.py",
    # the threads a figure ran with: the largest pool of blas, torch, xla and openmp threads; the descriptors'
    # thread keys would add torch_interop_threads, which that figure has never counted
    "measure/oversubscription.py",
    # the verdict page's precision line names JAX's and PyTorch's precision keys with a label each (verdict/ is
    # the declared helper's now)
    "verdict/page.py",
}


def docstrings(tree: ast.Module) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def record_keys(descriptor: FrameworkDescriptor) -> set[str]:
    """The keys its records carry, and the variables they are read from."""
    variables = {name for pair in descriptor.recorded_variables for name in pair}
    return {*descriptor.thread_keys, *descriptor.setting_keys, *variables}


def named_keys(tree: ast.Module, keys: set[str]) -> list[str]:
    """'xla_threads (33)': a string constant (not a docstring) that is one of `keys`."""
    skip = docstrings(tree)
    return [f"{node.value} ({node.lineno})" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in keys and id(node) not in skip]


def test_src_spells_a_frameworks_record_keys_only_in_its_own_code() -> None:
    keys = {key for descriptor in registered() for key in record_keys(descriptor)}
    assert {"xla_threads", "XLA_FLAGS", "jax_gpu_memory", "torch_matmul_precision", "cudnn"} <= keys
    named = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC)
        if any(relative.match(pattern) for pattern in OWN) or relative.as_posix() in KEYS_ALLOWED:
            continue
        text = path.read_text()
        if any(key in text for key in keys) and (found := named_keys(parsed(path), keys)):
            named[relative.as_posix()] = found
    assert named == {}
    stale = [p for p in sorted(KEYS_ALLOWED) if not named_keys(parsed(SRC / p), keys)]
    assert stale == []


def test_the_key_checker_finds_a_key_but_not_a_docstring() -> None:
    source = '"""xla_threads, in a docstring"""\nKEYS = ("blas_threads", "xla_threads")\ndef f():\n    "cudnn"\n'
    assert named_keys(ast.parse(source), {"xla_threads", "cudnn"}) == ["xla_threads (2)"]


def test_a_stand_in_is_named_only_by_its_descriptor(calls: Calls) -> None:
    """The goal's test: the stand-in's import name is nowhere in src/ (its descriptor is the test's)."""
    assert "cupy" in import_names()
    hits = [p for p in SRC.rglob("*.py") if may_name(p, {"cupy"}) and named_frameworks(parsed(p), {"cupy"})]
    assert hits == []
    keys = record_keys(registered()[-1])
    assert keys == {"cupy_threads", "cupy_flags", "CUPY_STAND_IN_FLAGS", "cupy_cache", "cupy_precision"}
    spelled = [p for p in SRC.rglob("*.py")
               if any(key in p.read_text() for key in keys) and named_keys(parsed(p), keys)]
    assert spelled == []
