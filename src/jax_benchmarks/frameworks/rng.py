"""One seed for the whole run: JAX keys, a NumPy generator and every loaded framework's global RNG."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from jax_benchmarks.frameworks.descriptors import jax_keys, registered, torch_generator

if TYPE_CHECKING:
    from jax_benchmarks.frameworks.descriptors import JaxKey, TorchGenerator


class RNG_Provider:  # noqa: N801 - the name the project's users know
    """`RNG_Provider(seed).get()` returns a fresh JAX key on every call.

    The same seed also seeds Python's `random`, `self.numpy`, and the global RNG of every framework
    already imported (each descriptor's `seed`: NumPy's global state, PyTorch's); backends that use
    torch call `seed_torch()` after importing it. JAX is imported on the first `get()`, so NumPy-only
    runs never load it.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        random.seed(seed)
        self.numpy: np.random.Generator = np.random.default_rng(seed)
        self._keys: Iterator[JaxKey] | None = None
        for descriptor in registered():
            if descriptor.seed is not None and descriptor.loaded():
                descriptor.seed(seed)

    def get(self) -> JaxKey:
        """A new key, split off the provider's state: never the same twice."""
        if self._keys is None:
            self._keys = jax_keys(self.seed)
        return next(self._keys)

    def seed_torch(self) -> TorchGenerator:
        """Seed PyTorch's global RNG and return a generator with the same seed."""
        return torch_generator(self.seed)
