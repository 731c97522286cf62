"""`--threads N`: one thread count for NumPy's BLAS/LAPACK, PyTorch and XLA, and what is in effect.

Each library is told in the way it listens, at the moment it listens:

* XLA sizes its CPU thread pools once, when JAX creates its CPU client, from
  the NPROC environment variable if set (read by XLA's `DefaultThreadPoolSize`;
  the name is in jaxlib's libjax_common.so), else from the CPU affinity mask.
  With one thread, `--xla_cpu_multi_thread_eigen=false` also keeps Eigen's
  kernels on the calling thread. Both must be in the process environment
  before JAX is imported; `framework_environment` computes them and the CLI
  sets them (a second command in a process that already loaded JAX keeps what
  was in effect, and the records say so).
* OpenBLAS, MKL and OpenMP read OPENBLAS_NUM_THREADS / MKL_NUM_THREADS /
  OMP_NUM_THREADS when they load; once loaded, threadpoolctl changes their
  pools in place (`pin_loaded`).
* PyTorch: `torch.set_num_threads` (intra-op) at any time;
  `torch.set_num_interop_threads` only before its first inter-op work, so a
  refusal is recorded rather than hidden.

`thread_state` reads back what is in effect without importing any framework:
it asks only libraries that are already loaded.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

Scalar = float | int | str | bool | None

XLA_POOL_VARIABLE = "NPROC"
EIGEN_MULTI_THREAD = "--xla_cpu_multi_thread_eigen"
BLAS_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def merged_xla_flags(existing: str, threads: int) -> str:
    """`existing` XLA_FLAGS with the Eigen multi-threading flag set for `threads` (other flags kept)."""
    flags = re.sub(rf"{EIGEN_MULTI_THREAD}=\S*", "", existing)
    if threads == 1:
        flags = f"{flags} {EIGEN_MULTI_THREAD}=false"
    return " ".join(flags.split())


def framework_environment(threads: int, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment variables that give every framework `threads` threads when it loads."""
    env = {name: str(threads) for name in BLAS_VARIABLES}
    env[XLA_POOL_VARIABLE] = str(threads)
    flags = merged_xla_flags(environ.get("XLA_FLAGS", ""), threads)
    if flags or "XLA_FLAGS" in environ:
        env["XLA_FLAGS"] = flags
    return env


def set_before_import(threads: int) -> list[str]:
    """Put `framework_environment` into this process's environment for the frameworks it will load.

    Returns notes for the user: which frameworks were already loaded (their
    thread pools are changed by `pin_loaded` where that is possible).
    """
    notes = []
    if "jax" in sys.modules or "jaxlib" in sys.modules:
        notes.append("JAX was already loaded: its XLA thread pools keep the size they started with")
    else:
        os.environ.update(framework_environment(threads, os.environ))
    return notes


def pin_loaded(threads: int) -> list[str]:
    """Limit the thread pools of the libraries loaded so far; returns notes on what could not be changed."""
    notes: list[str] = []
    if "numpy" in sys.modules or "torch" in sys.modules:
        limits = _threadpool_limits()
        if limits is not None:
            limits(limits=threads)  # not a context: the limit holds for the rest of the process
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)
        if torch.get_num_interop_threads() != threads:
            try:
                torch.set_num_interop_threads(threads)
            except RuntimeError:  # inter-op pool already started: PyTorch allows no change
                notes.append(f"PyTorch's inter-op pool had already started with {torch.get_num_interop_threads()} threads")
    return notes


def _threadpool_limits() -> Any:
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ImportError:  # the environment variables set before import still apply
        return None
    return threadpool_limits


def _threadpools() -> list[dict[str, Any]]:
    """threadpoolctl's view of the BLAS/LAPACK and OpenMP libraries loaded in this process."""
    if "numpy" not in sys.modules and "torch" not in sys.modules:
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
        "xla_threads": _int_or_none(os.environ.get(XLA_POOL_VARIABLE)),
    }
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "get_num_threads"):
        state["torch_threads"] = torch.get_num_threads()
        state["torch_interop_threads"] = torch.get_num_interop_threads()
    return state


def _int_or_none(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None
