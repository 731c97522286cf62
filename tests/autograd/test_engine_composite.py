"""The four composite models (weight sharing × input sharing), against jax.grad (the models:
tests/autograd/composites.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_benchmarks import autodiff as en
from jax_benchmarks.autodiff.graph import graph_nodes
from tests.autograd.composites import CASES, INPUTS, NoSharingTwoInputs, Simple

pytestmark = pytest.mark.usefixtures("x64")


@pytest.mark.parametrize("kind", INPUTS)
@pytest.mark.parametrize("case", CASES)
def test_composite_gradients_match_jax(case: str, kind: str) -> None:
    build, jax_fn, param_names, n_inputs, n_param_leaves, n_input_leaves = CASES[case]
    model = build()
    inputs = INPUTS[kind][:n_inputs]
    params = [model.param(name) for name in param_names]

    out = model(*inputs)
    out.backward()  # non-scalar output: gradient of sum(out)

    def total(*args: jax.Array) -> jax.Array:
        return jnp.sum(jax_fn(*args))

    args = [jnp.asarray(v, dtype=jnp.float64) for v in [*inputs, *[p.value for p in params]]]
    expected = jax.grad(total, argnums=tuple(range(len(args))))(*args)
    np.testing.assert_allclose(out.value, np.asarray(jax_fn(*args)), atol=1e-9)
    got = [out.grad(name) for name in model.input_names] + [out.grad(p) for p in params]
    for value, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(value, np.asarray(want), atol=1e-6, rtol=0)

    leaves = [n for n in graph_nodes(out) if isinstance(n, en.InputNode)]
    assert len([n for n in leaves if n.kind == "param"]) == n_param_leaves  # a shared weight is one leaf
    assert len([n for n in leaves if n.kind == "input"]) == n_input_leaves  # a shared input is one leaf


def test_simple_model_matches_its_hand_computed_values() -> None:
    # f(x, w) = (x + w)·x² at x = 3, w = 1: f = 36, ∂f/∂w = x² = 9, ∂f/∂x = 3x² + 2wx = 33.
    m = Simple(1.0)
    y = m(3.0)
    y.backward()
    assert y.value == 36.0 and y.grad(m.param("w")) == 9.0 and y.grad("x") == 33.0


def test_gradient_of_an_unused_parameter_is_refused() -> None:
    model = NoSharingTwoInputs()
    y = model.m1(3.0)  # m2 is not called: no path of y's graph reaches m2.w
    y.backward()
    assert y.uses(model.param("m1.w")) and not y.uses(model.param("m2.w"))
    with pytest.raises(ValueError, match="parameter 'w' is not used by 'multiply'"):
        y.grad(model.param("m2.w"))
    with pytest.raises(KeyError, match="no parameter"):
        model.param("m3.w")
