"""Timing PyTorch's train step leaves the training after it as it was: `end_step` puts back the parameters, the
optimizer's state and the random state that dropout draws from. Before, the number of timed calls (which depends
on the machine's speed) moved torch's global generator, so `mnist pytorch` gave other losses from run to run."""

from __future__ import annotations

import torch

from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.mnist.settings import MnistSettings
from jax_benchmarks.training.pytorch_trainer import TorchTrainer
from tests.mnist.conftest import synthetic_data


def losses_after_timing(timed_calls: int) -> list[float]:
    settings = MnistSettings.model_validate({"device": "cpu", "num_epochs": 1, "train_batch_size": 16,
                                             "comet": "off"})
    trainer = TorchTrainer(settings, synthetic_data(), RNG_Provider(0))
    step = trainer.prepare_step()
    for _ in range(timed_calls):
        step()
    trainer.end_step()
    return trainer.read_epoch(trainer.train_epoch(2, lambda: None)).step_losses


def test_the_losses_after_the_timed_steps_do_not_depend_on_how_many_were_timed() -> None:
    torch.manual_seed(1)  # the same global state before each trainer seeds its own
    once = losses_after_timing(1)
    torch.manual_seed(1)
    thrice = losses_after_timing(3)
    assert len(once) == 2 and once == thrice
