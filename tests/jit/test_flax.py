"""`jit flax`: tiny training runs with and without jit, the jit cache, the jaxpr and the plot."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from jax_benchmarks.jit import data as training_data
from jax_benchmarks.jit import flax_backend
from jax_benchmarks.jit.batching import Batching
from jax_benchmarks.jit.data import TrainingArrays, toy_dataset
from jax_benchmarks.jit.epochs import ModeTraining
from jax_benchmarks.jit.flax_report import check_results
from jax_benchmarks.jit.jit_cache import CacheTrace
from jax_benchmarks.jit.settings import JitTrainingSettings
from tests.conftest import invoke, read_jsonl

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# 500 points -> 400 training points: 6 batches of 64 and a last one of 16.
TINY = ("--points", "500", "--batch-size", "64", "--epochs", "2")


def by_variant(path: Path) -> dict[str, dict[str, object]]:
    return {str(r["variant"]): r for r in read_jsonl(path)}


def test_toy_dataset_is_seeded_split_and_has_four_classes() -> None:
    data = toy_dataset(1000, seed=3)
    assert data.x_train.shape == (800, 2) and data.x_test.shape == (200, 2)
    assert data.x_train.dtype == np.float32 and data.y_train.dtype == np.int32
    assert set(np.unique(np.concatenate([data.y_train, data.y_test]))) == {0, 1, 2, 3}
    again = toy_dataset(1000, seed=3)
    assert np.array_equal(data.x_train, again.x_train)
    assert not np.array_equal(data.x_train, toy_dataset(1000, seed=4).x_train)


def test_batching_counts_the_last_smaller_batch() -> None:
    ragged = Batching(400, 64, drop_last=False)
    assert (ragged.steps, ragged.last_batch, ragged.used, ragged.expected_compilations) == (7, 16, 400, 2)
    dropped = Batching(400, 64, drop_last=True)
    assert (dropped.steps, dropped.last_batch, dropped.used, dropped.expected_compilations) == (6, 0, 384, 1)
    assert Batching(384, 64, drop_last=False).expected_compilations == 1
    assert Batching(10, 64, drop_last=False).expected_compilations == 1  # a single, small batch


def test_mlp_without_drop_last_compiles_twice_and_shows_jaxpr_and_plot(results_path: Path) -> None:
    result = invoke("jit", "flax", *TINY, "--show-jaxpr", "--plot", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    records = by_variant(results_path)
    assert set(records) == {"eager", "jit"}
    jit, eager = records["jit"], records["eager"]
    assert jit["case"] == "mlp_epoch_400x2_float32"
    metrics = jit["metrics"]
    assert isinstance(metrics, dict)
    assert (metrics["cache_before"], metrics["cache_after_step_1"], metrics["compilations"]) == (0, 1, 2)
    assert jit["compile_s"] is not None and eager["compile_s"] is None
    assert metrics["speedup"] == pytest.approx(eager["median_s"] / jit["median_s"])  # type: ignore[operator]
    assert 0.0 <= metrics["test_accuracy"] <= 1.0
    out = " ".join(result.stdout.split())
    assert "after step 7 (batch of 16): 2" in out
    assert "the last, smaller batch compiled the step a second time" in out
    assert "jaxpr of the train step for one batch of 64" in out and "dot_general" in out

    plot = Path("data/plots/jit_flax_mlp_epoch_times.png")
    assert f"plot: {plot}" in out
    assert plot.read_bytes()[:8] == PNG_MAGIC
    with Image.open(plot) as image:
        image.verify()
    with Image.open(plot) as image:
        assert image.format == "PNG" and image.size[0] > 100 and image.size[1] > 100


def test_mlp_with_drop_last_compiles_once(results_path: Path) -> None:
    result = invoke("jit", "flax", *TINY, "--drop-last", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    jit = by_variant(results_path)["jit"]
    assert jit["case"] == "mlp_epoch_384x2_float32"
    assert isinstance(jit["metrics"], dict) and jit["metrics"]["compilations"] == 1
    assert isinstance(jit["params"], dict) and jit["params"]["steps_per_epoch"] == 6


def synthetic_images(train: int, test: int) -> Callable[..., TrainingArrays]:
    def load(_settings: JitTrainingSettings, _log: Callable[[str], None]) -> TrainingArrays:
        rng = np.random.default_rng(0)
        return TrainingArrays(
            "synthetic 28×28 images",
            rng.normal(size=(train, 28, 28, 1)).astype(np.float32), rng.integers(0, 10, train).astype(np.int32),
            rng.normal(size=(test, 28, 28, 1)).astype(np.float32), rng.integers(0, 10, test).astype(np.int32),
            classes=10,
        )
    return load


def test_cnn_trains_with_and_without_jit_on_injected_images(
    results_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(training_data, "load_images", synthetic_images(32, 20))
    result = invoke("jit", "flax", "--model", "cnn", "--batch-size", "16", "--epochs", "1",
                    "--results", str(results_path), "--json")
    assert result.exit_code == 0, result.stderr
    assert [r["variant"] for r in json.loads(result.stdout)] == ["eager", "jit"]  # stdout: JSON only
    records = by_variant(results_path)
    assert records["jit"]["case"] == "cnn_epoch_32x28x28x1_float32"
    assert isinstance(records["jit"]["metrics"], dict) and records["jit"]["metrics"]["compilations"] == 1
    assert records["jit"]["repeats"] == 1  # one epoch: a single figure, compilation included


@pytest.mark.skipif(importlib.util.find_spec("jax_benchmarks.mnist.data") is None,
                    reason="jax_benchmarks.mnist.data (the mnist group's loader) is not in this checkout yet")
def test_cnn_reads_the_embedded_mnist_digits(results_path: Path) -> None:
    result = invoke("jit", "flax", "--model", "cnn", "--data-source", "embedded", "--train-images", "128",
                    "--batch-size", "64", "--epochs", "1", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    jit = by_variant(results_path)["jit"]
    assert jit["case"] == "cnn_epoch_128x28x28x1_float32"
    assert isinstance(jit["params"], dict) and "embedded" in str(jit["params"]["data"])
    assert "1,000 test examples" in " ".join(result.stdout.split())


def mode(variant: str, losses: list[float], cache: CacheTrace | None = None) -> ModeTraining:
    def no_batches(_epoch: int) -> list[tuple[object, object]]:
        return []

    return ModeTraining(variant, step=None, state=None, batches_of_epoch=no_batches,  # type: ignore[arg-type]
                        cache=cache, losses=losses)


def test_checks_catch_diverging_modes_and_unexpected_compilations() -> None:
    batching = Batching(400, 64, drop_last=False)
    eager = mode("eager", [1.0, 0.5])
    ok = mode("jit", [1.0001, 0.6], CacheTrace(0, [1, 1, 2], [2, 2]))
    assert check_results(ok, eager, batching) == []
    wrong = mode("jit", [1.5, 0.5], CacheTrace(0, [1, 2, 3], [3, 3]))
    problems = check_results(wrong, eager, batching)
    assert len(problems) == 2
    assert "epoch 1 mean loss" in problems[0] and "compiled the step 3 time(s), expected 2" in problems[1]
    # Without the eager mode (-k selected only jit) the compilations are still checked.
    assert check_results(wrong, None, batching) == problems[1:]


def test_suites_name_the_cases_without_training_or_building_the_toy_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def must_not_run(*_: object) -> object:
        raise AssertionError("computed while building the suite")

    monkeypatch.setattr(training_data, "toy_dataset", must_not_run)
    monkeypatch.setattr(flax_backend, "build_state", must_not_run)
    monkeypatch.setattr(flax_backend, "jax_device", must_not_run)
    settings = JitTrainingSettings.model_validate(
        {"points": 500, "batch_size": 64, "epochs": 3, "device": "cpu", "results": tmp_path / "r.jsonl"})
    [suite] = flax_backend.suites(settings)
    assert [(c.name, c.variant, c.compiled, c.speedup_over) for c in suite.cases] == [
        ("mlp_epoch_400x2_float32", "eager", False, "eager"), ("mlp_epoch_400x2_float32", "jit", True, "eager")]
    assert suite.cases[0].params["steps_per_epoch"] == 7 and "not_jitted" in suite.cases[0].params


def test_k_selects_the_jitted_mode_alone(results_path: Path) -> None:
    result = invoke("jit", "flax", *TINY, "--drop-last", "-k", "[jit]", "--results", str(results_path))
    assert result.exit_code == 0, result.output
    [jit] = read_jsonl(results_path)
    assert (jit["variant"], jit["metrics"]["compilations"]) == ("jit", 1)
    assert "speedup" not in jit["metrics"] and "epoch_1_loss_eager" not in jit["checks"]
    assert "skipped: flax mlp_epoch_384x2_float32 [eager]" in " ".join(result.stdout.split())
