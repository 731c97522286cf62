"""The machine facts a record carries: the CPU's widest vector instructions, and the one label every page names a
CPU by."""

from __future__ import annotations

from pathlib import Path

import pytest

from jax_benchmarks.hardware import environment
from jax_benchmarks.report.envdiff import cpu_text, machine_text, same_machine
from jax_benchmarks.store.record import Scalar
from jax_benchmarks.verdict.against import machine_name

ZEN5_FLAGS = "flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c avx2 bmi2 avx512f avx512dq avx512bw avx512_bf16\n"
HASWELL_FLAGS = "flags\t\t: fpu vme sse sse2 ssse3 sse4_1 sse4_2 avx f16c avx2 bmi2 fma\n"
ARM_FEATURES = "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm sve\n"


def cpuinfo_of(text: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/cpuinfo reads `text` (None: not readable)."""
    real = Path.read_text

    def read_text(path: Path, *args: object, **kwargs: object) -> str:
        if str(path) != "/proc/cpuinfo":
            return real(path, *args, **kwargs)  # type: ignore[arg-type]
        if text is None:
            raise PermissionError("/proc/cpuinfo")
        return "processor\t: 0\nmodel name\t: AMD EPYC\n" + text

    monkeypatch.setattr(Path, "read_text", read_text)


@pytest.mark.parametrize(("text", "widest"), [(ZEN5_FLAGS, "AVX-512"), (HASWELL_FLAGS, "AVX2"),
                                              (ARM_FEATURES, "SVE"), ("flags\t\t: fpu sse sse2\n", None), (None, None)])
def test_the_widest_vector_set_is_read_from_cpuinfo(text: str | None, widest: str | None,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cpuinfo_of(text, monkeypatch)
    assert environment.cpu_vector() == widest


def test_every_record_names_its_vector_set() -> None:
    assert "cpu_vector" in environment.environment()


def test_one_label_names_the_cpu_its_cores_and_vector_set() -> None:
    zen5: dict[str, Scalar] = {"cpu": "AMD EPYC", "cpu_cores": 2, "cpu_vector": "AVX-512", "gpu": None, "host": "vm"}
    assert cpu_text(zen5) == "AMD EPYC (2 cores, AVX-512)"
    assert machine_name(zen5) == "AMD EPYC (2 cores, AVX-512), no GPU"
    assert machine_text(zen5) == "vm: AMD EPYC (2 cores, AVX-512), GPU none"
    # A record from before the vector set was recorded keeps its label; one with nothing known says so.
    assert cpu_text({"cpu": "AMD EPYC", "cpu_cores": 2}) == "AMD EPYC (2 cores)"
    assert cpu_text({}) == "unknown CPU"


def test_two_cpus_of_one_name_with_different_vector_sets_are_different_machines() -> None:
    zen5: dict[str, Scalar] = {"cpu": "AMD EPYC", "cpu_cores": 2, "cpu_vector": "AVX-512"}
    assert not same_machine(zen5, {**zen5, "cpu_vector": "AVX2"})
    assert same_machine(zen5, {"cpu": "AMD EPYC", "cpu_cores": 2})  # not recorded: not held against it
