"""What a run measured on: hardware and library versions, without importing them."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from src.core.devices import cpu_count, gpu_name

LIBRARIES = ("numpy", "scipy", "jax", "jaxlib", "flax", "optax", "torch")
REPO_ROOT = Path(__file__).resolve().parents[2]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The CPU's marketing name from /proc/cpuinfo (platform fallback elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO_ROOT,
            capture_output=True, text=True, timeout=5, check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT,
        capture_output=True, text=True, timeout=5,
    ).stdout.strip()
    return out.stdout.strip() + ("-dirty" if dirty else "")


def environment() -> dict[str, str | int | float | bool | None]:
    """Versions, CPU, GPU, git commit and XLA_FLAGS, recorded with every figure. XLA_FLAGS is read each
    time: a CLI command may set it (before JAX starts) after another record was written."""
    return {**_fixed_environment(), "xla_flags": os.environ.get("XLA_FLAGS")}


@functools.cache
def _fixed_environment() -> dict[str, str | int | float | bool | None]:
    env: dict[str, str | int | float | bool | None] = {"python": platform.python_version()}
    env.update({lib: _version(lib) for lib in LIBRARIES})
    env.update(
        platform=platform.platform(),
        cpu=cpu_model(),
        cpu_cores=cpu_count(),
        gpu=gpu_name(),
        git_commit=git_commit(),
    )
    return env
