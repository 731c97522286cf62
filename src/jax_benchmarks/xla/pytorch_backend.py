"""xla workload in PyTorch, on the CPU or a CUDA GPU."""

from __future__ import annotations

import functools

import torch

from jax_benchmarks.frameworks.descriptors import torch_device, torch_sync
from jax_benchmarks.measure.harness import Recorder, Suite
from jax_benchmarks.frameworks.rng import RNG_Provider
from jax_benchmarks.measure.timing import Sync
from jax_benchmarks.xla.settings import XlaSettings
from jax_benchmarks.xla.workload import LinalgOps, workload_suite

DTYPES = {"float64": torch.float64, "float32": torch.float32}


class TorchOps(LinalgOps[torch.Tensor, torch.Tensor]):
    name = "pytorch"

    def __init__(self, settings: XlaSettings) -> None:
        super().__init__(settings)
        self.torch_dtype = DTYPES[settings.dtype]
        # Float32 products follow the run's --precision, as JAX's do (src/jax_benchmarks/hardware/gpu_policy.py).

    @property
    def rng(self) -> str:
        # torch.Generator's algorithm is fixed by the device type: Philox on CUDA, MT19937 on the CPU.
        return f"torch.Generator({'Philox' if self.device_kind == 'gpu' else 'mt19937'})"

    @functools.cached_property
    def device(self) -> torch.device:
        return torch_device(self.device_kind)

    @property
    def sync(self) -> Sync:
        return torch_sync(self.device)

    @functools.cached_property
    def seeds(self) -> list[int]:
        """One seed per matrix, drawn from --seed: every call regenerates the same pair."""
        generator = RNG_Provider(self.seed).seed_torch()
        return [int(s) for s in torch.randint(0, 2**62, (2,), generator=generator)]

    def _uniform(self, seed: int) -> torch.Tensor:
        generator = torch.Generator(device=self.device).manual_seed(seed)
        return torch.rand((self.n, self.n), generator=generator, dtype=self.torch_dtype, device=self.device)

    def uniform_pair(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self._uniform(self.seeds[0]), self._uniform(self.seeds[1])

    def means(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return a.mean(), b.mean()

    def sums(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return a.sum(), b.sum()

    def matmul(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b

    def mean(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean()

    def inverse(self, c: torch.Tensor) -> torch.Tensor:
        inverse: torch.Tensor = torch.linalg.inv(c)  # untyped in torch's stubs
        return inverse

    def residual(self, c: torch.Tensor, c_inv: torch.Tensor) -> torch.Tensor:
        product = c @ c_inv
        # In place: C·C⁻¹ − I and its absolute value need no further N×N temporaries.
        product.diagonal().sub_(1)
        return product.abs_().max()

    def to_float(self, x: torch.Tensor) -> float:
        return float(x.item())

    def dtype_of(self, x: torch.Tensor) -> str:
        return str(x.dtype).removeprefix("torch.")


def give_memory_back(_run: Recorder) -> None:
    """The caching allocator keeps freed blocks (the harness has dropped the matrices by now, see
    `matrix_fixtures`); hand them back so that JAX, which runs next in `xla all`, finds the GPU's memory
    free (its size check counted on it)."""
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def suites(settings: XlaSettings) -> list[Suite]:
    # inference_mode: no autograd bookkeeping (version counters, views), plain linear algebra.
    return [workload_suite(TorchOps(settings), settings, context=torch.inference_mode,
                           after=give_memory_back if settings.device_kind == "gpu" else None)]
