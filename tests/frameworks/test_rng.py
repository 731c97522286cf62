from __future__ import annotations

import numpy as np

from jax_benchmarks.frameworks.rng import RNG_Provider


def test_get_returns_a_fresh_key_each_call_and_is_reproducible() -> None:
    import jax

    a, b = RNG_Provider(7), RNG_Provider(7)
    ka1, ka2 = a.get(), a.get()
    kb1 = b.get()
    draw = lambda k: float(jax.random.uniform(k))  # noqa: E731
    assert draw(ka1) != draw(ka2)
    assert draw(ka1) == draw(kb1)
    assert draw(RNG_Provider(8).get()) != draw(kb1)


def test_numpy_and_torch_are_seeded() -> None:
    import torch

    first = RNG_Provider(3)
    x1, g1 = first.numpy.random(3), first.seed_torch()
    t1 = torch.rand(3, generator=g1)
    second = RNG_Provider(3)
    x2, g2 = second.numpy.random(3), second.seed_torch()
    assert np.array_equal(x1, x2)
    assert torch.equal(t1, torch.rand(3, generator=g2))
    RNG_Provider(5)
    global_1 = (np.random.rand(), torch.rand(1).item())
    RNG_Provider(5)
    assert (np.random.rand(), torch.rand(1).item()) == global_1
