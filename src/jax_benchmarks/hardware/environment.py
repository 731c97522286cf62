"""What a run measured on: hardware, library versions and thread settings, without importing frameworks.

Fixed facts (versions, CPU, RAM, host, GPU driver) are read once per process;
what a command may change while it runs (the variables a framework reads when it
loads, e.g. XLA_FLAGS; thread counts; the matmul precision of a framework already
loaded) is read for every record.
A framework is asked only when it is already imported: `environment()` never
loads torch or jax by itself.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import subprocess
from importlib import metadata
from pathlib import Path

from jax_benchmarks.frameworks.descriptors import registered, variables_in, version_keys
from jax_benchmarks.hardware.devices import cpu_count, gpu_name, gpu_names, query_gpus
from jax_benchmarks.hardware.peaks import parse_cpuinfo
from jax_benchmarks.hardware.threads import thread_state

REPO_ROOT = Path(__file__).resolve().parents[3]  # src/jax_benchmarks/hardware/ -> the checkout
Env = dict[str, str | int | float | bool | None]


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


def cpu_mhz() -> float | None:
    """The CPU's maximum clock (cpufreq), else the clock /proc/cpuinfo reports; None where neither is readable."""
    try:
        return int(Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").read_text()) / 1000
    except (OSError, ValueError):
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("cpu MHz"):
                return round(float(line.split(":", 1)[1]), 1)
    except (OSError, ValueError):
        pass
    return None


# The widest vector instructions a CPU offers, widest first, as /proc/cpuinfo's flags (x86) or Features (Arm) name
# them. Two CPUs of one marketing name can differ here (a hypervisor may report every AMD EPYC as "AMD EPYC"), and a
# library with kernels for the wider set runs a matmul up to twice as fast as one without: on a 2-core "AMD EPYC" with
# AVX-512, XLA's own CPU kernels ran the 1000×1000 float64 matmul 1.9× faster than NumPy's OpenBLAS, which chose
# its Haswell (AVX2) kernels (docs/verdict.md, 2026-11-28).
VECTOR_SETS = (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("avx", "AVX"), ("sve", "SVE"), ("asimd", "NEON"))


def cpu_vector() -> str | None:
    """The widest vector instruction set the CPU offers ('AVX-512', 'AVX2', 'NEON', ...: `VECTOR_SETS`) from
    /proc/cpuinfo; None where it is not readable or names none of them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    flags, _ = parse_cpuinfo(text, allowed=None)
    return next((name for flag, name in VECTOR_SETS if flag in flags), None)


def ram_gib() -> float | None:
    """Total memory of the machine in GiB (/proc/meminfo, else sysconf)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        return None


def nvidia_versions() -> Env:
    """Driver and CUDA versions from nvidia-smi (only asked when a GPU is visible)."""
    exe = shutil.which("nvidia-smi")
    if not gpu_names() or exe is None:
        return {}
    drivers = query_gpus("driver_version")
    env: Env = {"gpu_driver": drivers[0][0] if drivers else None}
    try:
        # The CUDA version is in the banner only (no --query-gpu field reports it).
        banner = subprocess.run([exe], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return env
    for part in banner.split("|"):
        if "CUDA Version:" in part:  # the driver's highest supported CUDA, e.g. "CUDA Version: 12.4"
            env["cuda_driver_api"] = part.split("CUDA Version:", 1)[1].strip()
    return env


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


def loaded_framework_settings() -> Env:
    """Precision policy and CUDA libraries of the frameworks this process has already imported (each
    framework's descriptor says which)."""
    env: Env = {}
    for descriptor in registered():
        module = descriptor.module()
        if module is not None and descriptor.loaded_settings is not None:
            env.update(descriptor.loaded_settings(module))
    return env


def environment() -> Env:
    """Versions, hardware, git commit, the variables the frameworks read when they load (XLA_FLAGS) and thread
    counts, recorded with every figure.

    The variables and the thread settings are read each time: a CLI command may set
    them (before a framework loads) after another record was written."""
    return {
        **_fixed_environment(),
        **variables_in(os.environ),
        **thread_state(),
        **loaded_framework_settings(),
    }


@functools.cache
def _fixed_environment() -> Env:
    env: Env = {"python": platform.python_version()}
    env.update({dist: _version(dist) for dist in version_keys()})
    env.update(
        platform=platform.platform(),
        host=platform.node() or None,
        cpu=cpu_model(),
        cpu_cores=cpu_count(),
        cpu_vector=cpu_vector(),
        cpu_mhz=cpu_mhz(),
        ram_gib=ram_gib(),
        gpu=gpu_name(),
        git_commit=git_commit(),
    )
    env.update(nvidia_versions())
    return env
