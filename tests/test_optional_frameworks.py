"""A backend whose framework is not installed: listed as unavailable, refused in one line (exit 2), and
skipped (with a word) by `all`.

Each command runs in a fresh interpreter in which the missing frameworks cannot be imported:
`sys.modules[name] = None` makes `import name` raise ImportError and `importlib.util.find_spec(name)`
return None, as in an environment without them. CI also runs these commands in a real environment that
has only NumPy, PyTorch and the core dependencies (.ci/run, tools/check_pip_install.sh).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jax_benchmarks.frameworks.available import install_command, unavailable_reason
from jax_benchmarks.frameworks.descriptors import JAX, TORCH
from jax_benchmarks.groups import BENCHMARK_GROUPS, GROUPS

ROOT = Path(__file__).resolve().parents[1]
JAX_STACK = ("jax", "jaxlib", "flax", "optax", "orbax", "orbax.checkpoint")

RUN_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
sys.argv[1:2] = []
sys.path.insert(0, "src")
from jax_benchmarks.cli.root import main
main(sys.argv[1:])
"""


def run_without(missing: tuple[str, ...], *args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUN_WITHOUT, ",".join(missing), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "COLUMNS": str(columns)})


def test_every_framework_of_this_environment_is_found() -> None:
    for group in BENCHMARK_GROUPS:
        spec = importlib.import_module(GROUPS[group].module).SPEC
        for name, backend in spec.backends.items():
            assert backend.missing == (), name


def test_the_install_command_names_each_extra_once() -> None:
    assert install_command((*JAX.needs, *TORCH.needs)) == "pip install 'jax-benchmarks[jax,torch]'"
    assert unavailable_reason(JAX.needs) == "JAX is not installed (pip install 'jax-benchmarks[jax]')"


def test_a_missing_framework_is_listed_as_unavailable_in_help() -> None:
    done = run_without(JAX_STACK, "xla", "--help")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ")}
    assert "unavailable" not in lines["numpy"] and "unavailable" not in lines["pytorch"]
    assert "[unavailable: pip install 'jax-benchmarks[jax]']" in lines["jax"]
    assert "Run numpy, pytorch side by side (not installed: jax)." in lines["all"]


@pytest.mark.parametrize(("missing", "args", "message"), [
    (JAX_STACK, ("xla", "jax", "--matrix-size", "10"),
     "Error: xla jax is unavailable: JAX is not installed (pip install 'jax-benchmarks[jax]')"),
    (JAX_STACK, ("mnist", "flax", "--list"),
     "Error: mnist flax is unavailable: JAX, Flax, Optax and Orbax are not installed "
     "(pip install 'jax-benchmarks[jax]')"),
    (JAX_STACK, ("mnist", "evaluate", "flax"),
     "Error: mnist flax is unavailable: JAX, Flax, Optax and Orbax are not installed "
     "(pip install 'jax-benchmarks[jax]')"),
    (("torch",), ("autograd", "pytorch"),
     "Error: autograd pytorch is unavailable: PyTorch is not installed (pip install 'jax-benchmarks[torch]')"),
])
def test_asking_for_a_missing_framework_is_refused_in_one_line(
        missing: tuple[str, ...], args: tuple[str, ...], message: str) -> None:
    done = run_without(missing, *args)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [message]
    assert done.stdout == ""


def test_all_runs_the_installed_backends_and_says_what_it_skipped(tmp_path: Path) -> None:
    results = tmp_path / "results.jsonl"
    done = run_without(JAX_STACK, "xla", "all", "--quick", "--min-time", "0.01", "--results", str(results),
                       "--json", columns=60)
    assert done.returncode == 0, done.stderr
    said = done.stderr.splitlines()
    assert " ".join(said[:2]) == "xla all: skipped jax: JAX is not installed (pip install 'jax-benchmarks[jax]')"
    assert max(len(line) for line in said) <= 60  # wrapped at the console's width
    backends = {record["backend"] for record in json.loads(done.stdout.splitlines()[-1])}
    assert backends == {"numpy", "pytorch"}
    assert len(results.read_text().splitlines()) == len(json.loads(done.stdout.splitlines()[-1]))
