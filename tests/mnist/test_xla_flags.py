"""The XLA flags `mnist flax` sets on CPU, composed as strings before JAX starts."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from jax_benchmarks.hardware.xla_flags import CONVOLUTIONS, DOTS_ONLY, HOST_DEVICES, YNNPACK_OPS, conv_in_effect, cpu_flags, merged


def test_cpu_flags_for_devices_and_convolution_kernels() -> None:
    assert cpu_flags(2, "xla") == {HOST_DEVICES: "2", YNNPACK_OPS: DOTS_ONLY}
    assert cpu_flags(1, "ynnpack") == {HOST_DEVICES: None, YNNPACK_OPS: None}


def test_merged_replaces_our_flags_and_keeps_the_users() -> None:
    user = f"--xla_dump_to=/tmp/d {HOST_DEVICES}=8 {YNNPACK_OPS}=LIBRARY_FUSION_TYPE_DOT"
    out = merged(user, cpu_flags(2, "xla"))
    assert out == f"--xla_dump_to=/tmp/d {HOST_DEVICES}=2 {YNNPACK_OPS}={DOTS_ONLY}"
    assert merged(out, cpu_flags(1, "ynnpack")) == "--xla_dump_to=/tmp/d"
    assert merged("", {}) == ""


def test_conv_in_effect_reads_the_flags_back() -> None:
    assert conv_in_effect(merged("", cpu_flags(1, "xla"))) == "xla"
    assert conv_in_effect(merged("", cpu_flags(1, "ynnpack"))) == "ynnpack"  # no flag: jaxlib's default
    assert conv_in_effect(f"{YNNPACK_OPS}={DOTS_ONLY},{CONVOLUTIONS}") == "ynnpack"
    assert conv_in_effect(f"{YNNPACK_OPS}=LIBRARY_FUSION_TYPE_ELTWISE") == "xla"


def test_settings_say_the_kernels_in_effect_when_jax_was_already_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """XLA reads XLA_FLAGS once: a second command in a process where JAX is loaded cannot change them, so its
    settings (which label the records) are made to say what the flags in effect run."""
    from jax_benchmarks.cli.commands import conv_kernels_before_import
    from jax_benchmarks.mnist.settings import FlaxSettings

    def set_xla_flags(settings: FlaxSettings) -> Any:
        return conv_kernels_before_import("flax")(["flax"], settings)  # mnist's, before its backend loads

    monkeypatch.setitem(sys.modules, "jax", sys.modules.get("jax", object()))  # type: ignore[arg-type]
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false")  # no YNNPACK flag: jaxlib's default
    settings = set_xla_flags(FlaxSettings(device="cpu", xla_cpu_conv="xla", comet="off"))  # XLA:CPU flags
    assert settings.xla_cpu_conv == "ynnpack"
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false"  # left as it was
    monkeypatch.setenv("XLA_FLAGS", merged("", cpu_flags(1, "xla")))
    assert set_xla_flags(FlaxSettings(device="cpu", xla_cpu_conv="ynnpack", comet="off")).xla_cpu_conv == "xla"
