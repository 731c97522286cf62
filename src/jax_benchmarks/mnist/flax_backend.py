"""`mnist flax`: the backend adapter: which trainer a run uses (one process, several devices, or one process
of a multi-process job) and the suite of training cases (`jax_benchmarks.mnist.cases`). The model and its
trainer are `jax_benchmarks.training.flax_trainer`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.mnist.cases import mnist_suites
from jax_benchmarks.training.cases import Log
from jax_benchmarks.training.data import MnistData
from jax_benchmarks.mnist.settings import FlaxSettings, MnistSettings, trained_settings
from jax_benchmarks.training.settings import EvaluateSettings
from jax_benchmarks.mnist.flax_processes import ProcessFlaxTrainer
from jax_benchmarks.training.flax_trainer import BACKEND, FlaxTrainer
from jax_benchmarks.training.trainer import devices_variant



# One process drives every device of `--devices N` (one jitted step over a mesh).
SEVERAL = "devices"


def train_variant(settings: MnistSettings) -> str | None:
    """Column label: the device (and process) count, and "ynnpack conv" when XLA:CPU runs convolutions on
    YNNPACK (the settings say which kernels are in effect: the CLI set XLA_FLAGS from them before JAX started)."""
    labels = [devices_variant(SEVERAL, settings.device_count, settings.num_processes, settings.process_id)]
    if isinstance(settings, FlaxSettings) and settings.device_kind == "cpu" and settings.xla_cpu_conv == "ynnpack":
        labels.append("ynnpack conv")
    return " · ".join(label for label in labels if label) or None


def build_trainer(settings: MnistSettings) -> Callable[[MnistData, Log], FlaxTrainer]:
    def build(data: MnistData, log: Log) -> FlaxTrainer:
        rng = RNG_Provider(settings.seed)
        if settings.multi_process:
            trainer: FlaxTrainer = ProcessFlaxTrainer(settings, data, rng)
            log(f"{settings.num_processes} processes (jax.distributed), {trainer.devices} devices in one mesh; "
                f"this is process {settings.process_id}")
        else:
            trainer = FlaxTrainer(settings, data, rng)
            if trainer.mesh is not None:
                log(f"data-parallel over {trainer.devices} devices: "
                    f"{', '.join(str(d) for d in trainer.mesh.devices.flat)}")
        return trainer

    return build


def suites(settings: EvaluateSettings) -> Sequence[Suite]:
    """Training (`mnist flax|all`), or `mnist evaluate flax`: the trainer of the training settings' defaults."""
    trained = trained_settings(settings)
    variant, build = train_variant(trained), build_trainer(trained)
    return mnist_suites(settings, BACKEND, variant, build, compiled=True)
