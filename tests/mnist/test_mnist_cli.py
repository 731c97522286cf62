"""`mnist flax|pytorch|evaluate|preprocess-images` end to end, on tiny synthetic data."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from tests.help_probe import probe
from tests.conftest import invoke, read_jsonl

TINY = ("--dry-run", "--num-epochs", "1", "--train-batch-size", "16", "--test-batch-size", "32", "--repeats", "1")


class FakeData(NamedTuple):
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    source: str
    mean: float
    std: float

    # MnistData's stored images (uint8 there); only their shapes are read from a fake.
    @property
    def images_train(self) -> np.ndarray:
        return self.x_train[..., 0]

    @property
    def images_test(self) -> np.ndarray:
        return self.x_test[..., 0]


def synthetic_data(n_train: int = 96, n_test: int = 40, seed: int = 0) -> FakeData:
    """Noise images with one bright class-dependent band: learnable in a few steps."""
    rng = np.random.default_rng(seed)

    def make(n: int) -> tuple[np.ndarray, np.ndarray]:
        y = rng.integers(0, 10, n).astype(np.int32)
        x = rng.normal(0.0, 1.0, (n, 28, 28, 1)).astype(np.float32)
        for c in range(10):
            x[y == c, 2 * c:2 * c + 4, 4:24, 0] += 3.0
        return x, y

    x_train, y_train = make(n_train)
    x_test, y_test = make(n_test)
    return FakeData(x_train, y_train, x_test, y_test, "synthetic", 0.0, 1.0)


@pytest.fixture(autouse=True)
def _synthetic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("src.mnist.training.read_data", lambda settings, log: synthetic_data())
    monkeypatch.delenv("COMET_API_KEY", raising=False)


def cases(records: list[dict[str, Any]], backend: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        if r["backend"] == backend:
            out.setdefault(r["case"], []).append(r)
    return out


def check_dry_run_and_round_trip(backend: str, results_path: Path) -> None:
    """One dry-run epoch records every figure and saves; `mnist evaluate` reloads the checkpoint."""
    result = invoke("mnist", backend, *TINY, "--results", str(results_path))
    assert result.exit_code == 0, result.output
    assert "skip comet.ml initialization" in result.stdout
    assert "2,380,938" in result.stdout  # the model summary's total
    assert f"{backend}: test accuracy" in result.stdout
    by_case = cases(read_jsonl(results_path), backend)
    assert len(by_case["data_load"]) == 1
    assert len(by_case["train_epoch"]) == 1 and len(by_case["validation"]) == 1
    epoch = by_case["train_epoch"][0]
    assert epoch["params"]["steps_per_epoch"] == 3  # dry run: a few batches
    for metric in ("images_per_s", "gflops", "peak_share", "loss", "accuracy", "loop_overhead"):
        assert isinstance(epoch["metrics"][metric], float), metric
    step = by_case["train_step"][0]
    expected = epoch["median_s"] / (step["median_s"] * 3) - 1
    assert epoch["metrics"]["loop_overhead"] == pytest.approx(expected)
    # Only the jitted step has a compile time; PyTorch's eager step has none.
    assert (step["compile_s"] is not None) == (step["backend"] == "flax")
    validation = by_case["validation"][0]
    assert validation["metrics"]["images"] == 40  # every test image, no dropped batch
    assert "matmul_peak_2048x2048_float32" in by_case
    suffix = ".pt" if backend == "pytorch" else ""
    assert Path(f"data/checkpoints/{backend}_mnist{suffix}").exists()
    png = Path(f"data/plots/mnist_{backend}_mnist_predictions.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    result = invoke("mnist", "evaluate", backend, "--test-batch-size", "32", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    evaluated = [r for r in read_jsonl(results_path) if r["variant"] == "checkpoint"]
    assert [r["case"] for r in evaluated] == ["data_load", "validation"]
    evaluated = evaluated[1:]
    assert evaluated[0]["metrics"]["accuracy"] == pytest.approx(validation["metrics"]["accuracy"])
    assert evaluated[0]["metrics"]["loss"] == pytest.approx(validation["metrics"]["loss"], rel=1e-5)


def test_pytorch_dry_run_and_checkpoint_round_trip(results_path: Path) -> None:
    check_dry_run_and_round_trip("pytorch", results_path)


def test_evaluate_without_checkpoint_is_a_clear_error() -> None:
    result = invoke("mnist", "evaluate", "pytorch")
    assert result.exit_code == 2
    assert "no pytorch checkpoint" in result.stderr and "Traceback" not in result.output


def test_comet_offline_archive_and_the_key_never_shows(results_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("COMET_API_KEY", secret)
    result = invoke("mnist", "pytorch", *TINY, "--comet", "offline", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    archives = list(Path("data/comet").glob("*.zip"))
    assert len(archives) == 1
    with zipfile.ZipFile(archives[0]) as archive:
        names = archive.namelist()
        content = b"".join(archive.read(n) for n in names)
    assert names and b"train_step_loss" in content
    assert secret not in result.output and secret not in results_path.read_text()
    assert secret.encode() not in content


def test_preprocess_images_prints_normalization(results_path: Path) -> None:
    result = invoke("mnist", "preprocess-images", "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.output
    records = json.loads(result.stdout)
    assert [r["case"] for r in records] == ["data_load"]
    assert records[0]["metrics"]["train_images"] == 96
    assert "mean 0.0000" in result.stderr and "source: synthetic" in result.stderr


@pytest.mark.parametrize(
    ("args", "option", "allowed"),
    [
        (("--num-epochs", "0"), "--num-epochs", "1 ≤ value ≤ 10000"),
        (("--train-batch-size", "2048"), "--train-batch-size", "1 ≤ value ≤ 1024"),
        (("--learning-rate", "2"), "--learning-rate", "1e-06 ≤ value ≤ 1.0"),
        (("--comet", "online"), "--comet", "COMET_API_KEY"),
        (("--devices", "64"), "--devices", "CPU core(s)"),
        (("--devices", "two"), "--devices", "not a number"),
        (("--dataset", "fashion_mnist", "--data-source", "embedded"), "--data-source", "only for mnist"),
    ],
)
def test_bad_options_exit_2_naming_the_option(args: tuple[str, ...], option: str, allowed: str) -> None:
    result = invoke("mnist", "flax", *args)
    assert result.exit_code == 2
    assert option in result.stderr and allowed in result.stderr
    assert "Traceback" not in result.output


def test_help_imports_no_framework() -> None:
    results = [probe(args) for args in (["mnist"], ["mnist", "flax"], ["mnist", "evaluate"])]
    out = "".join(str(r["help"]) for r in results)
    assert "--epochs" in out and "--optimizer" in out
    assert "--num-epochs" not in out  # the old name works (hidden alias) but is not advertised
    assert all(r["heavy"] == [] for r in results), results
