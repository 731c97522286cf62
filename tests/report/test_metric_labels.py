"""An mnist epoch's `accuracy` is its training batches', a validation's the test images': every table says which,
for today's records, the first records' case names and the committed headline records, none rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jax_benchmarks.cli.tables import metric_label
from tests.conftest import invoke
from tests.report.fixtures import ENV

REPO = Path(__file__).resolve().parents[2]
TRAINING = "training accuracy of the epoch (0–1)"
TEST = "test accuracy (0–1)"


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # rich wraps at 80 columns when not on a terminal


def test_the_case_says_whose_accuracy_and_loss_a_metric_row_holds() -> None:
    for epoch in ("train_epoch_128x28x28_float32", "train_epoch"):  # today's name, the first records'
        assert metric_label("accuracy", epoch) == TRAINING
        assert metric_label("loss", epoch) == "training loss of the epoch"
    for validation in ("validation_1000x28x28_float32", "validation"):
        assert metric_label("accuracy", validation) == TEST and metric_label("loss", validation) == "test loss"
    # A case that does not say whose accuracy it is claims neither; other metrics keep their one label.
    assert metric_label("accuracy", "epoch_60000_float32") == "accuracy (0–1)"
    assert metric_label("accuracy") == "accuracy (0–1)"
    assert metric_label("images_per_s", "validation_1000x28x28_float32") == "images/s"
    assert metric_label("accuracy", "train_epochs_x") == "accuracy (0–1)"  # another operation's name


def test_the_pixel_statistics_label_says_the_units_they_are_recorded_in() -> None:
    from jax_benchmarks.training.data.arrays import pixel_stats

    import numpy as np

    mean, std = pixel_stats(np.array([[[0, 255], [255, 0]]], dtype=np.uint8))  # what the load case records
    assert (mean, std) == (0.5, 0.5)  # pixels ÷ 255
    assert metric_label("mean", "load_mnist_28x28_uint8") == "training pixel mean (0–1)"
    assert metric_label("std", "load_mnist_28x28_uint8") == "training pixel std (0–1)"


def first_mnist_records(path: Path) -> Path:
    """mnist records as its first version wrote them (no schema_version, cases `train_epoch` and `validation`)."""
    common = {"run_id": "20261122T060000Z-a1b2c3", "timestamp": "2026-11-22T06:00:00+00:00", "group": "mnist",
              "backend": "flax", "variant": None, "device": "cpu", "dtype": "float32", "env": ENV}
    lines = [
        {**common, "case": "train_epoch", "params": {"epoch": 1}, "median_s": 60.0, "iqr_s": 0.0, "min_s": 60.0,
         "repeats": 1, "samples_s": [60.0], "metrics": {"images_per_s": 1000.0, "accuracy": 0.9312, "loss": 0.2345}},
        {**common, "case": "validation", "params": {"epoch": 1}, "median_s": 2.0, "iqr_s": 0.0, "min_s": 2.0,
         "repeats": 1, "samples_s": [2.0], "metrics": {"images_per_s": 5000.0, "accuracy": 0.9876, "loss": 0.0456}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def row_of(text: str, value: str) -> str:
    [line] = [line for line in text.splitlines() if value in line]
    return line


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_the_first_mnist_records_read_with_training_and_test_labels(tmp_path: Path, fmt: str) -> None:
    results = first_mnist_records(tmp_path / "results.jsonl")
    result = invoke("report", "--results", str(results), "--format", fmt)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    if fmt == "html":  # one table row a line is not promised: the cells between the label and the value
        assert f"train_epoch · {TRAINING}</td><td" in out and f"validation · {TEST}</td><td" in out
        assert out.index(TRAINING) < out.index("0.9312") < out.index(TEST) < out.index("0.9876")
        return
    assert TRAINING in row_of(out, "0.9312") and TEST in row_of(out, "0.9876")
    assert "training loss of the epoch" in row_of(out, "0.2345") and "test loss" in row_of(out, "0.0456")


def test_the_committed_headline_records_read_with_training_and_test_labels() -> None:
    result = invoke("report", "--results", str(REPO / "docs" / "headline-cpu.jsonl"), "--group", "mnist",
                    "--format", "markdown")
    assert result.exit_code == 0, result.stderr
    labels = [line.split("|")[1].strip() for line in result.stdout.splitlines() if "accuracy" in line]
    assert labels == [f"train_epoch_128x28x28_float32 · {TRAINING}", f"validation_1000x28x28_float32 · {TEST}"]
