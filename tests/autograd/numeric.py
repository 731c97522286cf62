"""Central differences of an engine Function, to check any operator's VJP without another framework."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from jax_benchmarks import autodiff as en


def assert_vjp_matches_central_differences(engine_fn: Callable[..., Any], args: list[np.ndarray]) -> None:
    """<cotangent, J·e_i> by central differences of the forward pass equals the VJP's element i, for every
    element of every input (a forward pass per element: small inputs only)."""
    names = [f"a{i}" for i in range(len(args))]
    fn = en.Function(engine_fn, inputs=names)
    out = fn(*args)
    cotangent = np.random.default_rng(1).normal(size=out.shape)
    out.backward(cotangent)
    eps = 1e-6
    for position, arg_name in enumerate(names):
        numeric = np.zeros_like(args[position])
        for index in np.ndindex(args[position].shape):
            shifted = [a.copy() for a in args]
            shifted[position][index] += eps
            up = np.array(fn(*shifted).value)  # a copy: reshape's value is a view of its input
            shifted[position][index] -= 2 * eps
            down = fn(*shifted).value
            numeric[index] = np.sum(cotangent * (up - down)) / (2 * eps)
        np.testing.assert_allclose(out.grad(arg_name), numeric, rtol=1e-6, atol=1e-7)
