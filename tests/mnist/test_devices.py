"""`--devices`: data-parallel Flax over host devices, PyTorch DDP over processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from src.core.devices import cpu_count
from tests.conftest import invoke, read_jsonl
from tests.mnist.test_mnist_cli import TINY, _synthetic

__all__ = ["_synthetic"]  # autouse: synthetic data for the in-process runs

REPO = Path(__file__).resolve().parents[2]
needs_two_cores = pytest.mark.skipif(cpu_count() < 2, reason="--devices 2 needs 2 cores on a CPU-only machine")

# Runs in a fresh interpreter: the XLA flag must be set before JAX is imported.
EQUIVALENCE = """
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
from src.core.rng import RNG_Provider
from src.mnist.flax_backend import FlaxTrainer
from src.mnist.settings import MnistSettings
from tests.mnist.test_mnist_cli import synthetic_data

data = synthetic_data()
out = {}
for devices in ("1", "2"):
    settings = MnistSettings.model_validate(
        {"devices": devices, "dry_run": True, "num_epochs": 1, "train_batch_size": 16, "comet": "off"}
    )
    trainer = FlaxTrainer(settings, data, RNG_Provider(0))
    result = trainer.read_epoch(trainer.train_epoch(3, lambda: None))
    out[devices] = {
        "losses": list(result.step_losses),
        "data_devices": len(trainer.x_train.sharding.device_set),
        "state_devices": len({d for leaf in __import__("jax").tree.leaves(trainer.state) for d in leaf.devices()}),
    }
print("RESULT", json.dumps(out))
"""


@needs_two_cores
def test_flax_two_host_devices_match_one_device() -> None:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    proc = subprocess.run(
        [sys.executable, "-c", EQUIVALENCE], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.split("RESULT", 1)[1])
    assert out["1"]["data_devices"] == 1 and out["2"]["data_devices"] == 2
    assert out["2"]["state_devices"] == 2  # parameters replicated on both devices
    one, two = out["1"]["losses"], out["2"]["losses"]
    assert len(one) == len(two) == 3
    # Same global batch, same seed: only the all-reduce's summation order differs.
    assert two == pytest.approx(one, rel=1e-4)


@needs_two_cores
def test_flax_devices_all_sets_the_xla_flag_before_jax(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "import src.mnist.training as training\n"
        "from tests.mnist.test_mnist_cli import synthetic_data\n"
        "training.read_data = lambda settings, log: synthetic_data()\n"
        "from src.cli import main\n"
        f"main(['mnist', 'flax', '--devices', 'all', *{list(TINY)!r}, '--results', 'r.jsonl', '--comet', 'off'])\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    assert f"XLA_FLAGS=--xla_force_host_platform_device_count={cpu_count()} set before importing JAX" in proc.stdout
    epochs = [r for r in read_jsonl(tmp_path / "r.jsonl") if r["case"] == "train_epoch"]
    assert [r["variant"] for r in epochs] == [f"{cpu_count()} devices"]
    assert epochs[0]["params"]["devices"] == cpu_count()


@needs_two_cores
def test_pytorch_ddp_two_processes_runs_a_dry_run_epoch(results_path: Path) -> None:
    result = invoke("mnist", "pytorch", "--devices", "2", *TINY, "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert "DistributedDataParallel: 2 processes (gloo)" in result.stdout
    records = read_jsonl(results_path)
    epochs = [r for r in records if r["case"] == "train_epoch"]
    assert [r["variant"] for r in epochs] == ["2 processes"]
    assert epochs[0]["metrics"]["images_per_s"] > 0
    assert epochs[0]["params"]["batch"] == 16  # the global batch: 8 images per process
    assert Path("data/checkpoints/pytorch_mnist.pt").exists()


def test_batch_must_split_over_the_devices() -> None:
    result = invoke("mnist", "flax", "--devices", "2", "--train-batch-size", "15")
    if cpu_count() < 2:
        assert "--devices" in result.stderr
    else:
        assert result.exit_code == 2
        assert "--train-batch-size" in result.stderr and "multiple of 2" in result.stderr
