"""Training and checkpoint edge cases: optimizer-aware options, output folders checked before
training, atomic checkpoints, corrupt checkpoints, and a diverged loss (PyTorch; Flax in test_flax_cli.py)."""

from __future__ import annotations

import json
import math
import logging
import threading
import time
from pathlib import Path

import pytest

from jax_benchmarks.mnist.checkpoints import save_atomically, write_atomically
from jax_benchmarks.training.trainer import EpochResult
from tests.conftest import invoke, read_jsonl
from tests.mnist.conftest import EPOCH, TINY, VALIDATION


@pytest.mark.parametrize("backend", ["pytorch", "flax"])
def test_adam_momentum_1_is_refused_before_any_work(backend: str, results_path: Path) -> None:
    result = invoke("mnist", backend, *TINY, "--momentum", "1.0", "--results", str(results_path))
    assert result.exit_code == 2
    assert "'--momentum'" in result.stderr and "0 ≤ value < 1 for adam" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not results_path.exists() or results_path.read_text() == ""


def test_sgd_momentum_1_is_still_valid() -> None:
    from jax_benchmarks.mnist.settings import MnistSettings

    assert MnistSettings(optimizer="sgd", momentum=1.0).momentum == 1.0


@pytest.mark.parametrize("blocked", ["data/checkpoints", "data/plots"])
def test_unwritable_output_folder_is_found_before_training(blocked: str, results_path: Path) -> None:
    Path(blocked).parent.mkdir(parents=True, exist_ok=True)
    Path(blocked).write_text("a file where the folder should be")  # unwritable even for root
    result = invoke("mnist", "pytorch", *TINY, "--results", str(results_path))
    assert result.exit_code == 2
    assert f"cannot write {blocked.split('/')[1]} to {blocked}" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not results_path.exists() or results_path.read_text() == ""  # nothing was trained


def test_report_plot_checks_the_plot_folder_first(results_path: Path) -> None:
    from tests.report.fixtures import all_records, write_results

    write_results(results_path, all_records())
    Path("data").mkdir()
    Path("data/plots").write_text("not a folder")
    result = invoke("report", "--plot", "--results", str(results_path))
    assert result.exit_code == 2 and "cannot write plots to data/plots" in result.stderr
    assert result.stdout == ""


def test_nan_loss_stops_training_exit_1_and_saves_nothing(results_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    real = TorchTrainer.read_epoch

    def diverged(self: TorchTrainer, output: object) -> EpochResult:
        result = real(self, output)
        return EpochResult(math.nan, result.accuracy, result.images, result.step_losses)

    monkeypatch.setattr(TorchTrainer, "read_epoch", diverged)
    result = invoke("mnist", "pytorch", *TINY, "--results", str(results_path))
    assert result.exit_code == 1
    # Divergence is the epoch's check: recorded failed, with no figure of the diverged model, and it ends the suite.
    assert "Error: check failed: pytorch train_epoch_" in result.stderr
    assert "training diverged: the loss of epoch 1 is nan" in result.stderr
    assert "Traceback" not in result.stderr
    records = read_jsonl(results_path)
    epochs = [r for r in records if r["case"] == EPOCH]
    assert [r["checks"] for r in epochs] == [{"loss_finite": False}]
    assert "loss" not in epochs[0]["metrics"] and "accuracy" not in epochs[0]["metrics"]
    assert VALIDATION not in [r["case"] for r in records]
    assert not Path("data/checkpoints/pytorch_mnist.pt").exists()
    assert not Path("data/checkpoints/pytorch_mnist.json").exists()


@pytest.mark.parametrize("damage", ["garbage", "empty", "foreign", "bad_metadata"])
def test_corrupt_checkpoint_is_one_line_exit_2(damage: str, results_path: Path) -> None:
    folder = Path("data/checkpoints")
    folder.mkdir(parents=True)
    (folder / "pytorch_mnist.json").write_text("{not json" if damage == "bad_metadata" else "{}")
    weights = folder / "pytorch_mnist.pt"
    if damage == "foreign":
        import torch

        torch.save({"conv1.weight": torch.zeros(3, 3)}, weights)  # another model's parameters
    else:
        weights.write_bytes(b"\x00garbage" * 100 if damage != "empty" else b"")
    result = invoke("mnist", "evaluate", "pytorch", "--test-batch-size", "32", "--results", str(results_path))
    assert result.exit_code == 2, result.output
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "checkpoint" in errors[0] and "is corrupt or does not fit this model" in errors[0]
    assert "Traceback" not in result.output


class SlowFolderTrainer:
    """Writes a checkpoint folder file by file, slowly: concurrent saves overlap."""

    backend = "fake"

    def __init__(self, tag: str) -> None:
        self.tag = tag

    def save(self, path: Path) -> Path:
        path.mkdir()
        for i in range(5):
            (path / f"part{i}").write_text(self.tag)
            time.sleep(0.01)
        return path


def test_concurrent_checkpoint_saves_never_collide_or_mix(tmp_path: Path) -> None:
    final = tmp_path / "checkpoints" / "fake_mnist"
    errors: list[BaseException] = []

    def save(tag: str) -> None:
        try:
            for _ in range(5):
                save_atomically(SlowFolderTrainer(tag), final)  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    logging_before = logging.root.manager.disable
    threads = [threading.Thread(target=save, args=(tag,)) for tag in "abcd"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert logging.root.manager.disable == logging_before  # each save turns logging off; the last one back on
    tags = {p.read_text() for p in final.iterdir()}
    assert len(tags) == 1 and len(list(final.iterdir())) == 5  # one whole checkpoint, from one run
    assert [p.name for p in final.parent.iterdir()] == ["fake_mnist"]  # no temporary left behind


def test_metadata_is_replaced_atomically(tmp_path: Path) -> None:
    target = tmp_path / "meta.json"
    write_atomically(target, json.dumps({"a": 1}).encode())
    write_atomically(target, json.dumps({"a": 2}).encode())
    assert json.loads(target.read_text()) == {"a": 2} and [p.name for p in tmp_path.iterdir()] == ["meta.json"]
