"""One policy for the defaults in which JAX and PyTorch differ on NVIDIA GPUs.

Left alone, the two frameworks do not compute the same thing on a GPU:
* float32 matrix products: JAX's default precision lets XLA use TensorFloat-32
  (10 mantissa bits) on Ampere and later GPUs, PyTorch's matmul default is IEEE
  float32, while PyTorch's cuDNN convolutions default to TF32. `--precision`
  picks one policy (`float32`: IEEE float32 products and convolutions everywhere;
  `tf32`: TF32 tensor cores everywhere) and applies it to both frameworks.
* convolution algorithms: XLA autotunes its GPU convolutions by default, PyTorch
  does so only with `torch.backends.cudnn.benchmark`; both autotune here.
* memory: JAX preallocates 75 % of the GPU's memory when it starts, which leaves
  PyTorch (in `xla all`, `mnist all`) too little; JAX allocates on demand here
  (XLA_PYTHON_CLIENT_PREALLOCATE=false), unless the user set that variable: its
  descriptor's `prepare_environment`, which the CLI calls before JAX is imported
  (jax_benchmarks.frameworks.descriptors.prepare_environments).

CPUs compute float32 in IEEE arithmetic whatever the policy says. Every record
carries the policy in effect (`GpuPolicy.record`), and a run's records what each framework it imports
was prepared with (JAX's GPU memory).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Literal

from jax_benchmarks.frameworks.descriptors import registered

# bf16: bfloat16 mixed precision, where a command offers it (mnist's training): the model computes in bfloat16 from
# float32 parameters, as each framework's users write it (the trainer applies it); what stays float32 is IEEE.
MatmulPrecision = Literal["float32", "tf32", "bf16"]

# Each framework's own names for these policies are on its descriptor (jax_benchmarks.frameworks.descriptors).

# A command that offers bf16 says so in its settings' CHOICES; every other takes these.
FLOAT32_POLICIES: tuple[MatmulPrecision, ...] = ("float32", "tf32")


@dataclass(frozen=True)
class GpuPolicy:
    """What decides GPU speed and was set alike for both frameworks, as recorded with every figure."""

    precision: MatmulPrecision
    conv_autotune: bool = True

    def record(self) -> dict[str, str | int | float | bool | None]:
        return {"precision": self.precision, "conv_autotune": self.conv_autotune}


@contextmanager
def applied(precision: MatmulPrecision, frameworks: Collection[str]) -> Iterator[None]:
    """Apply the policy to the frameworks named by import name (those a backend imported) while the block runs:
    each framework's descriptor says how (JAX: the precision of everything traced inside the block; PyTorch:
    float32 matmul and cuDNN convolution precision, and cuDNN autotuning); the previous values come back
    afterwards, so nothing leaks into later work."""
    with ExitStack() as stack:
        for descriptor in registered():
            if descriptor.precision is not None and set(frameworks) & set(descriptor.imports):
                stack.enter_context(descriptor.precision(precision))
        yield
