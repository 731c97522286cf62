"""`jit flax` trains the mnist group's model on its data through mnist's public names alone: every name it
imports from mnist is declared in the module's `__all__` (nothing `_`-prefixed, no module reached into)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import jax_benchmarks.jit.flax_backend as flax_backend

MNIST = "jax_benchmarks.mnist"


def mnist_imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) of every import from the mnist package, a plain `import jax_benchmarks.mnist...` as (module, "")."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(MNIST):
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name.startswith(MNIST)]
    return found


def test_jit_flax_imports_only_mnist_public_names() -> None:
    imported = mnist_imports(Path(flax_backend.__file__))
    assert imported  # it does train mnist's model
    undeclared = []
    for module_name, name in imported:
        module = importlib.import_module(module_name)
        public = getattr(module, "__all__", None)
        if not name or name.startswith("_") or public is None or name not in public:
            undeclared.append(f"{module_name}.{name or '*'}")
    assert undeclared == [], f"jit flax reaches into mnist's internals: {undeclared}"


def test_the_check_sees_an_undeclared_name(tmp_path: Path) -> None:
    source = tmp_path / "probe.py"
    source.write_text("from jax_benchmarks.mnist.cases import read_data, CaseNames\nimport jax_benchmarks.mnist.cases\n")
    assert mnist_imports(source) == [("jax_benchmarks.mnist.cases", "read_data"),
                                     ("jax_benchmarks.mnist.cases", "CaseNames"), ("jax_benchmarks.mnist.cases", "")]
    cases = importlib.import_module("jax_benchmarks.mnist.cases")
    assert "read_data" not in cases.__all__ and "CaseNames" in cases.__all__
