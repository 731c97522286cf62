"""What differs between the environments of two compared runs, and whether they ran on the same machine."""

from __future__ import annotations

from collections.abc import Mapping

from jax_benchmarks.store.record import Scalar

# The machine a figure was measured on. A record without `host` or `cpu_vector` (written before they were
# recorded) is matched on the rest.
MACHINE_KEYS = ("host", "cpu", "cpu_cores", "cpu_vector", "gpu")


def compared_keys() -> tuple[str, ...]:
    """What decides speed, in the order it is listed: the machine, the versions of the numerical libraries (their
    descriptors' distributions), the settings in effect (the frameworks' own from their descriptors). cpu_mhz is
    left out: /proc/cpuinfo reports the clock of the moment, which differs on every read."""
    # Imported here: the descriptors load the measurement core (rich among it), which `--help` must not.
    from jax_benchmarks.frameworks.descriptors import setting_keys, thread_keys, variable_keys, version_keys

    return (*MACHINE_KEYS, "ram_gib", "platform", "python", *version_keys(), *THREADS_IN_EFFECT, *thread_keys(),
            *variable_keys(), *POLICY_IN_EFFECT, *setting_keys(), *BUILD)


# What the environment records of the threads and precision in effect (hardware/environment.py), beside what each
# framework's descriptor says its records carry (its threads, the variables it reads when it loads, its settings):
# the threads (blas from threadpoolctl, threads from --threads), the GPU policy
# (src/jax_benchmarks/hardware/gpu_policy.py), the GPU's driver and the code's commit.
THREADS_IN_EFFECT = ("blas", "threads", "blas_threads", "openmp_threads")
POLICY_IN_EFFECT = ("precision", "conv_autotune")
BUILD = ("gpu_driver", "cuda_driver_api", "git_commit")


# What a run was asked to measure with (the settings a command records in its env, cli/commands.py), beyond its
# case names (sizes, dtypes and device are in each figure's key): two runs that differ in one of them do not
# measure the same thing, so a regression gate judges neither against the other. The frameworks' own (what each
# was prepared with before it was imported, e.g. JAX's GPU memory) follow from their descriptors.
SETTING_KEYS = ("threads", "min_time_s", "quick", "precision", "conv_autotune")


def setting_differences(current: Mapping[str, Scalar], baseline: Mapping[str, Scalar]) -> list[str]:
    """'threads: 1 → default' for each setting recorded in both runs with another value (a setting missing on
    either side, in a record from before it was recorded, is not held against it)."""
    from jax_benchmarks.frameworks.descriptors import prepared_settings

    return [f"{key}: {_text(baseline[key], True)} → {_text(current[key], True)}"
            for key in (*SETTING_KEYS, *prepared_settings())
            if key in current and key in baseline and current[key] != baseline[key]]


def same_machine(env: Mapping[str, Scalar], other: Mapping[str, Scalar]) -> bool:
    """Same host, CPU, core count and GPU (a key missing on either side is not held against it)."""
    return all(env.get(key) == other.get(key) for key in MACHINE_KEYS if key in env and key in other)


def framework_changes(current: Mapping[str, Scalar], baseline: Mapping[str, Scalar]) -> list[str]:
    """'torch 2.11.0 → 2.13.0' for each framework recorded in both runs with another version (or installed
    in one only); a key missing on either side (a record from before it was recorded) is not held against it."""
    from jax_benchmarks.frameworks.descriptors import version_keys

    return [f"{key} {_version_text(baseline[key])} → {_version_text(current[key])}"
            for key in version_keys() if key in current and key in baseline and current[key] != baseline[key]]


def _version_text(value: Scalar) -> str:
    return "not installed" if value is None else str(value)


def cpu_text(env: Mapping[str, Scalar]) -> str:
    """'AMD EPYC (2 cores, AVX-512)': a record's CPU, its cores and its widest vector instructions, each where
    recorded (hardware/environment.py)."""
    details = [f"{env['cpu_cores']} cores" if env.get("cpu_cores") else "", str(env.get("cpu_vector") or "")]
    shown = ", ".join(detail for detail in details if detail)
    return f"{env.get('cpu') or 'unknown CPU'}{f' ({shown})' if shown else ''}"


def machine_text(env: Mapping[str, Scalar]) -> str:
    host = f"{env['host']}: " if env.get("host") else ""
    return f"{host}{cpu_text(env)}, GPU {env.get('gpu') or 'none'}"


def differences(current: Mapping[str, Scalar], baseline: Mapping[str, Scalar]) -> list[str]:
    """'key: baseline → current' for every compared key that differs (not recorded: 'not recorded'). What a
    framework was prepared with is compared only where both runs imported it (a run that did not has no such key)."""
    from jax_benchmarks.frameworks.descriptors import prepared_settings

    prepared = set(prepared_settings())
    lines = []
    for key in compared_keys():
        if key not in current and key not in baseline:
            continue
        if key in prepared and (key not in current or key not in baseline):
            continue
        now, before = current.get(key), baseline.get(key)
        if now != before:
            lines.append(f"{key}: {_text(before, key in baseline)} → {_text(now, key in current)}")
    return lines


def _text(value: Scalar, recorded: bool) -> str:
    if not recorded:
        return "not recorded"
    return "default" if value is None else str(value)
