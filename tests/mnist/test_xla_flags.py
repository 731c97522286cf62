"""The XLA flags `mnist flax` sets on CPU, composed as strings before JAX starts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.hardware.xla_flags import CONVOLUTIONS, DOTS_ONLY, HOST_DEVICES, YNNPACK_OPS, conv_in_effect, cpu_flags, merged

REPO = Path(__file__).resolve().parents[2]


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


def check_wrapped(text: str, width: int) -> list[str]:
    """The lines of `text`: none wider than `width` but a single word (one that cannot be wrapped)."""
    lines = text.splitlines()
    assert [line for line in lines if len(line) > width and len(line.split()) > 1] == [], lines
    return lines


@pytest.mark.parametrize("err", [False, True])
def test_the_notes_of_the_flags_set_wrap_at_a_narrow_console_and_never_cut_a_flag(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], err: bool) -> None:
    from jax_benchmarks.cli.commands import conv_kernels_before_import
    from jax_benchmarks.mnist.settings import FlaxSettings

    monkeypatch.delitem(sys.modules, "jax", raising=False)  # as in a fresh process, before JAX loads
    monkeypatch.setenv("XLA_FLAGS", "")
    monkeypatch.setenv("COLUMNS", "60")
    settings = FlaxSettings(device="cpu", xla_cpu_conv="xla", comet="off", devices="2", json_output=err)
    assert conv_kernels_before_import("flax")(["flax"], settings).xla_cpu_conv == "xla"
    captured = capsys.readouterr()
    said, other = (captured.err, captured.out) if err else (captured.out, captured.err)
    assert other == ""  # --json: the notes on stderr, stdout kept to the records
    lines = check_wrapped(said, 60)
    flag = f"XLA_FLAGS={YNNPACK_OPS}={DOTS_ONLY}"  # 83 characters: on a line of its own, whole
    assert flag in lines and len(lines) > 3
    assert " ".join(said.split()) == (
        f"XLA_FLAGS={HOST_DEVICES}=2 set before importing JAX: the CPU is split into 2 XLA devices (one per core) "
        f"for data-parallel training {flag} set before importing JAX: YNNPACK runs dot products only, convolutions "
        "run on XLA's own kernels (--xla-cpu-conv ynnpack: jaxlib's default)")


def test_mnist_list_in_a_pipe_at_80_columns_wraps_the_flags_note(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"COLUMNS": "80"}
    listed = subprocess.run([sys.executable, str(REPO / "main.py"), "mnist", "flax", "--list", "--quick"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    lines = check_wrapped(listed.stdout, 80)
    assert lines[0] == f"XLA_FLAGS={YNNPACK_OPS}={DOTS_ONLY}" and lines[1].startswith("set before importing JAX: ")
