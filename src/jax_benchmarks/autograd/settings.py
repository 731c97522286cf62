"""Options of the autograd commands (validated here, turned into click options by the core)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import Field

from jax_benchmarks.hardware.devices import MULTI_DEVICE
from jax_benchmarks.hardware.xla_flags import CpuConv, cpu_conv_field
from jax_benchmarks.settings import BenchSettings, CompileMode, compile_field

Dtype = Literal["float32", "float64"]


class AutogradSettings(BenchSettings):
    """`autograd jax` / `autograd pytorch`."""

    QUICK: ClassVar[dict[str, Any]] = {**BenchSettings.QUICK, "points": 100}
    CHOICES: ClassVar[dict[str, Sequence[str]]] = {**BenchSettings.CHOICES, "device": MULTI_DEVICE}

    dtype: Dtype = Field("float32", description="Floating-point type of the points and the gradients.")
    points: int = Field(
        1000, ge=2, le=100_000,
        description="Points of linspace(0, 10π, N) whose gradient is timed (the loop variants take one call per point).",
    )


class CnnSettings(AutogradSettings):
    """Every autograd backend and `all`: they also time the mnist CNN's train step."""

    QUICK: ClassVar[dict[str, Any]] = {**AutogradSettings.QUICK, "cnn_batch": 16}

    cnn_batch: int = Field(
        128, ge=1, le=1024,
        description="Images per train step of the mnist CNN case (cnn_train_step_{B}x28x28_{dtype}).",
    )


class TorchCnnSettings(CnnSettings):
    """`autograd pytorch`: its gradient of the sum can also be compiled."""

    compile_mode: CompileMode | None = compile_field("f in the backward(sum) gradient")


class FlaxCnnSettings(CnnSettings):
    """`autograd jax`: which kernels XLA:CPU runs the Flax CNN's convolutions on, as `mnist flax` chooses them
    (set in XLA_FLAGS before JAX is imported)."""

    xla_cpu_conv: CpuConv = cpu_conv_field()


class EngineSettings(CnnSettings):
    """`autograd numpy`: the engine can also draw its graph."""

    plot_graph: bool = Field(
        False, description="Write the engine's computational graph of its last call as a PNG under data/plots/."
    )


class AllSettings(EngineSettings, FlaxCnnSettings, TorchCnnSettings):
    """`autograd all`: the options of every backend."""
