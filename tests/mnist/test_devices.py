"""`--devices`: data-parallel Flax over host devices, PyTorch DDP over processes.

Every run here is on the CPU (`--device cpu`), on a GPU machine too: host devices, XLA:CPU's convolution
kernels and gloo exist only there, and `auto` would pick a GPU machine's GPU, which has its own count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.hardware.devices import cpu_count
from jax_benchmarks.hardware.xla_flags import DOTS_ONLY, HOST_DEVICES, YNNPACK_OPS, cpu_flags, merged
from tests.conftest import invoke, read_jsonl
from tests.mnist.conftest import EPOCH, TINY


REPO = Path(__file__).resolve().parents[2]
needs_two_cores = pytest.mark.skipif(cpu_count() < 2, reason="--devices 2 on the CPU needs 2 cores")

# Runs in a fresh interpreter: XLA_FLAGS must be set before JAX is imported.
EQUIVALENCE = """
import json, sys
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.training.flax_trainer import FlaxTrainer
from jax_benchmarks.mnist.settings import MnistSettings
from tests.mnist.conftest import synthetic_data

data = synthetic_data()
out = {}
for devices in sys.argv[1:]:
    settings = MnistSettings.model_validate(
        {"device": "cpu", "devices": devices, "dry_run": True, "num_epochs": 1, "train_batch_size": 16,
         "comet": "off"}
    )
    trainer = FlaxTrainer(settings, data, RNG_Provider(0))
    result = trainer.read_epoch(trainer.train_epoch(3, lambda: None))
    out[devices] = {
        "losses": list(result.step_losses),
        "data_devices": len(trainer.x_train.sharding.device_set),
        "state_devices": len({d for leaf in __import__("jax").tree.leaves(trainer.state) for d in leaf.devices()}),
    }
# Which kernels XLA compiled a convolution to in this process (YNNPACK's appear as ynn fusions).
import jax, jax.numpy as jnp
nhwc = ("NHWC", "HWIO", "NHWC")
conv = jax.jit(lambda x, k: jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=nhwc))
hlo = conv.lower(jnp.ones((2, 26, 26, 32)), jnp.ones((3, 3, 32, 64))).compile().as_text()  # the model's second conv
for result in out.values():
    result["ynnpack_convolutions"] = "ynn_fusion" in hlo
print("RESULT", json.dumps(out))
"""


def train_three_steps(xla_flags: str, *devices: str) -> dict[str, dict[str, Any]]:
    """Three training steps per device count, in a fresh interpreter started with these XLA_FLAGS."""
    env = {**os.environ, "XLA_FLAGS": xla_flags}
    proc = subprocess.run(
        [sys.executable, "-c", EQUIVALENCE, *devices], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out: dict[str, dict[str, Any]] = json.loads(proc.stdout.split("RESULT", 1)[1])
    return out


# e2e: fresh interpreters that train; the flags they start with are checked in process by
# test_mnist_flax_sets_its_flags_before_jax_in_process, the losses' agreement only here
@pytest.mark.e2e
@needs_two_cores
def test_flax_two_host_devices_match_one_device() -> None:
    out = train_three_steps(merged("", cpu_flags(2, "xla")), "1", "2")
    assert out["1"]["data_devices"] == 1 and out["2"]["data_devices"] == 2
    assert out["2"]["state_devices"] == 2  # parameters replicated on both devices
    one, two = out["1"]["losses"], out["2"]["losses"]
    assert len(one) == len(two) == 3
    # Same global batch, same seed: only the all-reduce's summation order differs.
    assert two == pytest.approx(one, rel=1e-4)

# e2e: fresh interpreters that train (see above)
@pytest.mark.e2e
def test_xla_and_ynnpack_convolutions_train_alike() -> None:
    xla = train_three_steps(merged("", cpu_flags(1, "xla")), "1")["1"]
    ynnpack = train_three_steps(merged("", cpu_flags(1, "ynnpack")), "1")["1"]
    assert (xla["ynnpack_convolutions"], ynnpack["ynnpack_convolutions"]) == (False, True)  # the flag took effect
    assert len(xla["losses"]) == len(ynnpack["losses"]) == 3
    # Other kernels, other summation order: float32 rounding only.
    assert xla["losses"] == pytest.approx(ynnpack["losses"], rel=1e-4)


def run_flax_fresh(tmp_path: Path, xla_flags: str | None, *args: str) -> tuple[str, dict[str, Any]]:
    """`mnist flax ARGS` on synthetic data in a fresh interpreter (the CLI sets XLA_FLAGS before JAX starts);
    returns its stdout and its first train_epoch record."""
    script = (
        "import jax_benchmarks.training.cases as cases\n"
        "from tests.mnist.conftest import synthetic_data\n"
        "cases.read_data = lambda settings, log: synthetic_data()\n"
        "from jax_benchmarks.cli.root import main\n"
        f"main(['mnist', 'flax', '--device', 'cpu', *{[*args, *TINY]!r}, '--results', 'r.jsonl', '--comet', 'off'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"} | {"PYTHONPATH": str(REPO)}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    epoch = next(r for r in read_jsonl(tmp_path / "r.jsonl") if r["case"] == EPOCH)
    return proc.stdout, epoch


def test_mnist_flax_sets_its_flags_before_jax_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fresh-interpreter runs' settings step, in this process with JAX taken as not loaded yet: `--devices all`
    on a CPU sets the host devices and XLA's own convolutions; `--xla-cpu-conv ynnpack` removes the flag and
    keeps the user's other flags."""
    from jax_benchmarks.cli.commands import conv_kernels_before_import
    from jax_benchmarks.mnist.settings import FlaxSettings

    monkeypatch.delitem(sys.modules, "jax", raising=False)
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    before = conv_kernels_before_import("flax")
    devices_all = before(["flax"], FlaxSettings(device="cpu", devices="all", comet="off"))
    assert devices_all.xla_cpu_conv == "xla"
    assert os.environ["XLA_FLAGS"] == f"{HOST_DEVICES}={cpu_count()} {YNNPACK_OPS}={DOTS_ONLY}" if cpu_count() > 1 \
        else f"{YNNPACK_OPS}={DOTS_ONLY}"
    monkeypatch.setenv("XLA_FLAGS", f"{YNNPACK_OPS}={DOTS_ONLY} --xla_cpu_enable_fast_math=false")
    assert before(["flax"], FlaxSettings(device="cpu", xla_cpu_conv="ynnpack", comet="off")).xla_cpu_conv == "ynnpack"
    assert os.environ["XLA_FLAGS"] == "--xla_cpu_enable_fast_math=false"


# e2e: a fresh interpreter that trains; twin: test_mnist_flax_sets_its_flags_before_jax_in_process
@pytest.mark.e2e
@needs_two_cores
def test_flax_devices_all_sets_the_xla_flags_before_jax(tmp_path: Path) -> None:
    stdout, epoch = run_flax_fresh(tmp_path, None, "--devices", "all")
    cores = cpu_count()
    said = " ".join(stdout.split())  # the notes wrap at the console's width (80 columns in a pipe)
    assert f"XLA_FLAGS={HOST_DEVICES}={cores} set before importing JAX" in said
    assert f"XLA_FLAGS={YNNPACK_OPS}={DOTS_ONLY} set before importing JAX" in said
    assert epoch["variant"] == f"{cores} devices"
    assert epoch["env"]["xla_flags"] == f"{HOST_DEVICES}={cores} {YNNPACK_OPS}={DOTS_ONLY}"

# e2e: a fresh interpreter that trains; twin: test_mnist_flax_sets_its_flags_before_jax_in_process
@pytest.mark.e2e
def test_flax_with_ynnpack_convolutions_says_so_in_its_records(tmp_path: Path) -> None:
    user_flags = f"{YNNPACK_OPS}={DOTS_ONLY} --xla_cpu_enable_fast_math=false"
    stdout, epoch = run_flax_fresh(tmp_path, user_flags, "--xla-cpu-conv", "ynnpack")
    assert "XLA_FLAGS=" not in stdout  # nothing added: one device, jaxlib's default kernels
    assert epoch["variant"] == "ynnpack conv"
    assert epoch["env"]["xla_flags"] == "--xla_cpu_enable_fast_math=false"  # the user's other flag is kept


# e2e: two processes that train (the multi-process path: tests/mnist/test_processes.py)
@pytest.mark.e2e
@needs_two_cores
def test_pytorch_ddp_two_processes_runs_a_dry_run_epoch(results_path: Path) -> None:
    result = invoke("mnist", "pytorch", "--device", "cpu", "--devices", "2", *TINY, "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert "DistributedDataParallel: 2 processes (gloo)" in result.stdout
    records = read_jsonl(results_path)
    epochs = [r for r in records if r["case"] == EPOCH]
    assert [r["variant"] for r in epochs] == ["2 processes"]
    assert epochs[0]["metrics"]["images_per_s"] > 0
    assert epochs[0]["params"]["batch"] == 16  # the global batch: 8 images per process
    assert Path("data/checkpoints/pytorch_mnist.pt").exists()


def test_batch_must_split_over_the_devices() -> None:
    result = invoke("mnist", "flax", "--device", "cpu", "--devices", "2", "--train-batch-size", "15")
    if cpu_count() < 2:
        assert "--devices" in result.stderr
    else:
        assert result.exit_code == 2
        assert "--train-batch-size" in result.stderr and "multiple of 2" in result.stderr
