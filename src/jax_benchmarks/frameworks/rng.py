"""One seed for the whole run: JAX keys, a NumPy generator and PyTorch's RNG."""

from __future__ import annotations

import random
import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import jax
    import torch


class RNG_Provider:  # noqa: N801 - the name the project's users know
    """`RNG_Provider(seed).get()` returns a fresh JAX key on every call.

    The same seed also seeds Python's `random`, NumPy (global state and
    `self.numpy`) and, when torch is imported, PyTorch; backends that use
    torch call `seed_torch()` after importing it. JAX is imported on the first
    `get()`, so NumPy-only runs never load it.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        random.seed(seed)
        np.random.seed(seed % 2**32)
        self.numpy: np.random.Generator = np.random.default_rng(seed)
        self._key: jax.Array | None = None
        # A module hidden by setting sys.modules[name] = None (as the tests of a missing framework do) is not
        # loaded: only a real module there means torch was imported.
        if sys.modules.get("torch") is not None:
            self.seed_torch()

    def get(self) -> jax.Array:
        """A new key, split off the provider's state: never the same twice."""
        import jax

        if self._key is None:
            self._key = jax.random.key(self.seed)
        self._key, key = jax.random.split(self._key)
        new_key: jax.Array = key
        return new_key

    def seed_torch(self) -> torch.Generator:
        """Seed PyTorch's global RNG and return a generator with the same seed."""
        import torch

        torch.manual_seed(self.seed)
        return torch.Generator().manual_seed(self.seed)
