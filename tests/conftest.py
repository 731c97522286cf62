"""Shared test fixtures: offline HuggingFace, a private results file, a CLI runner."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

# Never wait ~20 s per hub attempt: this machine (and CI) has no network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("COMET_DISABLE_AUTO_LOGGING", "1")


class _Entry(click.Command):
    """Runs the real entry point (one-line errors, exit codes) under CliRunner."""

    def main(self, args: Sequence[str] | None = None, *_: Any, **__: Any) -> Any:
        from jax_benchmarks.cli.root import cli
        from jax_benchmarks.errors import run_cli

        sys.exit(run_cli(cli, list(args or ())))


# Runs a child with SIGINT handled as in a foreground terminal, even if the test runner was started with it
# ignored (a background job; the CLI respects that): `[sys.executable, *AS_IN_A_TERMINAL, script, ...]`.
# An exec'd wrapper, not preexec_fn: forking a process that has JAX's threads running can deadlock.
AS_IN_A_TERMINAL = ("-c", "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                          "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def auto_device(backend: str) -> str:
    """Where a backend runs under `--device auto`: the GPU where one is visible, except NumPy (CPU only)."""
    from jax_benchmarks.hardware.devices import resolve_device

    return "cpu" if backend == "numpy" else resolve_device("auto")


def invoke(*args: str) -> Result:
    """`python main.py *args`, in process; result.stdout / result.stderr are separate."""
    return CliRunner().invoke(_Entry("main"), list(args))


@pytest.fixture(scope="session", autouse=True)
def _one_xla_compilation_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Tests build the same XLA programs again and again (the mnist CNN's step in each new trainer, whose jit
    starts with an empty cache; the same eager operations): an on-disk compilation cache for this session
    compiles each program once, in a folder of its own, so a run starts cold as on a fresh clone. Only for this
    process, where the collected test modules imported JAX (the full suite): a test's subprocesses compile
    their own (JAX's cache files are written in place, and a concurrent reader warns on stderr)."""
    jax = sys.modules.get("jax")
    if jax is None:
        yield
        return
    settings = {"jax_compilation_cache_dir": str(tmp_path_factory.mktemp("xla-cache")),
                "jax_persistent_cache_min_compile_time_secs": 0.0, "jax_persistent_cache_min_entry_size_bytes": 0}
    from jax.experimental.compilation_cache import compilation_cache

    before = {name: getattr(jax.config, name) for name in settings}
    for name, value in settings.items():
        jax.config.update(name, value)
    compilation_cache.reset_cache()  # JAX decides on its first compile whether a cache is used: decide again
    yield
    for name, value in before.items():
        jax.config.update(name, value)
    compilation_cache.reset_cache()


@pytest.fixture
def results_path(tmp_path: Path) -> Path:
    return tmp_path / "results.jsonl"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands write data/ (plots, caches) relative to the working directory; outside a checkout the default
    store is in the user's data folder, here one under tmp_path (subprocesses inherit it)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user-data"))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
