"""docs/architecture.md's example of a new backend, made real: a CuPy backend for `xla` is its module and
one spec entry, nothing else. A stand-in `cupy` module (NumPy under CuPy's names, which CuPy shares with
NumPy) is put in `sys.modules`: `importlib.util.find_spec` then finds it as it would find CuPy installed.
Without it (`sys.modules["cupy"] = None`: not importable, not found) the backend is listed as unavailable."""

from __future__ import annotations

import ast
import importlib.machinery
import re
import sys
import textwrap
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from jax_benchmarks.cli.commands import BackendSpec, GroupSpec, build_group
from jax_benchmarks.frameworks.available import Framework
from jax_benchmarks.xla.cli import SPEC
from jax_benchmarks.xla.settings import XlaSettings
from tests.conftest import read_jsonl
from tests.xla.test_xla import expected_cases

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MODULE = "cupy_example_backend"

# The backend module of the docs' step 1, whole (the page elides the methods NumPy's backend has too).
BACKEND_SOURCE = '''
import cupy

from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.xla.settings import XlaSettings
from jax_benchmarks.xla.workload import LinalgOps, workload_suite


class CupyOps(LinalgOps[cupy.ndarray, cupy.ndarray]):
    name = "cupy"

    @property
    def rng(self) -> str:
        return "cupy.random.default_rng"

    @property
    def sync(self):  # CuPy launches kernels asynchronously, as JAX does
        return lambda _result: cupy.cuda.Device().synchronize()

    def matmul(self, a: cupy.ndarray, b: cupy.ndarray) -> cupy.ndarray:
        return a @ b

    def uniform_pair(self):
        return tuple(cupy.random.default_rng(seed).random((self.n, self.n), dtype=self.dtype) for seed in (1, 2))

    def means(self, a, b):
        return a.mean(), b.mean()

    def sums(self, a, b):
        return a.sum(), b.sum()

    def mean(self, x):
        return x.mean()

    def inverse(self, c):
        return cupy.linalg.inv(c)

    def residual(self, c, c_inv):
        return cupy.abs(c @ c_inv - cupy.eye(self.n, dtype=self.dtype)).max()

    def to_float(self, x):
        return float(x)

    def dtype_of(self, x):
        return str(x.dtype)


def suites(settings: XlaSettings) -> list[Suite]:
    return [workload_suite(CupyOps(settings), settings)]
'''


def documented_blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", ARCHITECTURE.read_text(), flags=re.DOTALL)
    return [textwrap.dedent(block) for block in blocks]


def documented_spec_entry() -> BackendSpec:
    """The `"cupy": BackendSpec(...)` entry of the page's step 2, evaluated as written."""
    (block,) = [block for block in documented_blocks() if '"cupy": BackendSpec(' in block]
    entry = block[block.index('"cupy": BackendSpec(') + len('"cupy": '):]
    call = ast.parse(entry.split("# new")[0].strip().rstrip(","), mode="eval")
    spec = eval(compile(call, "architecture.md", "eval"),  # noqa: S307 - the page's own example
                {"BackendSpec": BackendSpec, "XlaSettings": XlaSettings, "Framework": Framework})
    assert isinstance(spec, BackendSpec)
    return spec


def with_cupy() -> GroupSpec:
    """The xla group with the docs' spec entry; its module is the one written by `cupy_backend`."""
    return replace(SPEC, backends={**SPEC.backends, "cupy": replace(documented_spec_entry(), module=MODULE)})


def stand_in_cupy() -> types.ModuleType:
    cupy = types.ModuleType("cupy")
    cupy.__spec__ = importlib.machinery.ModuleSpec("cupy", None)
    for name in ("ndarray", "random", "linalg", "abs", "eye"):
        setattr(cupy, name, getattr(np, name))
    cupy.cuda = types.SimpleNamespace(Device=lambda: types.SimpleNamespace(synchronize=lambda: None))
    return cupy


@pytest.fixture
def cupy_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / f"{MODULE}.py").write_text(BACKEND_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)


def help_lines(group: GroupSpec) -> dict[str, str]:
    result = CliRunner().invoke(build_group(group), ["--help"])
    assert result.exit_code == 0, result.output
    return {line.split()[0]: line for line in result.output.splitlines() if line.startswith("  ")}


def test_the_documented_backend_module_is_the_one_tested() -> None:
    (block,) = [block for block in documented_blocks() if "class CupyOps" in block]
    shown = [line for line in block.splitlines() if line.strip() and not line.strip().startswith("...")]
    assert shown and all(line in BACKEND_SOURCE.splitlines() for line in shown), shown


def test_without_cupy_it_is_listed_unavailable_and_refused_in_one_line(
        monkeypatch: pytest.MonkeyPatch, cupy_backend: None) -> None:
    monkeypatch.setitem(sys.modules, "cupy", None)
    group = with_cupy()
    lines = help_lines(group)
    assert "[unavailable: pip install 'jax-benchmarks[cupy]']" in lines["cupy"]
    assert "unavailable" not in lines["numpy"]
    assert "(not installed: cupy)" in lines["all"]
    refused = CliRunner().invoke(build_group(group), ["cupy", "--matrix-size", "8"])
    assert refused.exit_code == 2
    assert refused.output.splitlines()[-1] == \
        "Error: xla cupy is unavailable: CuPy is not installed (pip install 'jax-benchmarks[cupy]')"


def test_with_cupy_it_is_listed_and_runs_the_workload(
        monkeypatch: pytest.MonkeyPatch, cupy_backend: None, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "cupy", stand_in_cupy())
    group = with_cupy()
    lines = help_lines(group)
    assert "unavailable" not in lines["cupy"] and "CuPy on a CUDA GPU." in lines["cupy"]
    assert "Run numpy, pytorch, jax, cupy side by side." in lines["all"]
    results = tmp_path / "results.jsonl"
    done = CliRunner().invoke(build_group(group), ["cupy", "--matrix-size", "16", "--repeats", "2",
                                                   "--results", str(results)])
    assert done.exit_code == 0, done.output
    records = read_jsonl(results)
    assert {record["backend"] for record in records} == {"cupy"}
    assert {record["case"] for record in records} == expected_cases(16, "float64")
    assert all(all(record["checks"].values()) for record in records)
