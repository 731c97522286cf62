"""`--threads N`: one thread count for every framework and the BLAS/LAPACK it loads, and what is in effect.

Each library is told in the way it listens, at the moment it listens:

* OpenBLAS, MKL and OpenMP read OPENBLAS_NUM_THREADS / MKL_NUM_THREADS /
  OMP_NUM_THREADS when they load; once loaded, threadpoolctl changes their
  pools in place (`pin_loaded`).
* a framework that sizes its pools once, when it loads (XLA, under JAX), reads the variables its descriptor's
  `thread_environment` names (jax_benchmarks.frameworks.descriptors); they must be in the process environment
  before it is imported: `framework_environment` computes them and the CLI sets them (a second command in a
  process that already loaded it keeps what was in effect, and the records say so).
* a framework whose pools can be resized once loaded (PyTorch) is told by its descriptor's `pin_threads`,
  which says what it refused rather than hiding it.

`thread_state` reads back what is in effect without importing any framework:
it asks only libraries that are already loaded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from jax_benchmarks.frameworks.descriptors import registered

Scalar = float | int | str | bool | None

BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def framework_environment(threads: int, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables that give every framework `threads` threads when it loads."""
    env = {name: str(threads) for name in BLAS_VARIABLES}
    for descriptor in registered():
        if descriptor.thread_environment is not None:
            env.update(descriptor.thread_environment(threads, environ))
    return env


def set_before_import(threads: int) -> list[str]:
    """Put `framework_environment` into this process's environment for the frameworks it will load.

    Returns notes for the user: which frameworks were already loaded (their thread pools are changed by
    `pin_loaded` where that is possible); where one of them reads its variables only when it loads, none is
    set: the process keeps the threads it started with, and the records say so.
    """
    notes = []
    env = {name: str(threads) for name in BLAS_VARIABLES}
    for descriptor in registered():
        if descriptor.thread_environment is None:
            continue
        if descriptor.loaded():
            notes.append(f"{descriptor.label} was already loaded: {descriptor.threads_fixed_when_loaded}")
        else:
            env.update(descriptor.thread_environment(threads, os.environ))
    if not notes:
        os.environ.update(env)
    return notes


def _blas_loaded() -> bool:
    """Whether a framework that loads BLAS/OpenMP pools is loaded (threadpoolctl finds nothing before)."""
    return any(descriptor.loaded() for descriptor in registered() if descriptor.loads_blas)


def pin_loaded(threads: int) -> list[str]:
    """Limit the thread pools of the libraries loaded so far; returns notes on what could not be changed."""
    notes: list[str] = []
    if _blas_loaded():
        limits = _threadpool_limits()
        if limits is not None:
            limits(limits=threads)  # not a context: the limit holds for the rest of the process
    for descriptor in registered():
        module = descriptor.module()
        if module is not None and descriptor.pin_threads is not None:
            notes += descriptor.pin_threads(module, threads)
    return notes


def _threadpool_limits() -> Any:
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:  # the environment variables set before import still apply
        return None
    return threadpool_limits


def _threadpools() -> list[dict[str, Any]]:
    """threadpoolctl's view of the BLAS/LAPACK and OpenMP libraries loaded in this process."""
    if not _blas_loaded():
        return []  # nothing loaded yet: threadpoolctl would find nothing either
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:
        return []
    info: list[dict[str, Any]] = threadpool_info()
    return info


def thread_state() -> dict[str, Scalar]:
    """Thread counts in effect now: BLAS/OpenMP pools, PyTorch's, and XLA's pool setting."""
    pools = _threadpools()
    blas = [p for p in pools if p.get("user_api") == "blas"]
    state: dict[str, Scalar] = {
        "blas": "; ".join(
            f"{p.get('internal_api')} {p.get('version')}"
            + (f" ({p['threading_layer']})" if p.get("threading_layer") else "")
            # The kernel family OpenBLAS picked for this CPU (OPENBLAS_CORETYPE can force an older one):
            # the same library runs a matmul 2-3x slower on Nehalem kernels than on SkylakeX ones.
            + (f" {p['architecture']} kernels" if p.get("architecture") else "")
            for p in blas
        ) or None,
        "blas_threads": blas[0]["num_threads"] if blas else None,
        "openmp_threads": next((p["num_threads"] for p in pools if p.get("user_api") == "openmp"), None),
    }
    for descriptor in registered():
        if descriptor.thread_state is not None:
            state.update(descriptor.thread_state(descriptor.module()))
    return state
