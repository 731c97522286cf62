"""The four composite cases of the zkynet design (weight sharing × input sharing), against jax.grad."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from src.autograd import engine as en
from src.autograd.engine.backprop import graph_nodes

pytestmark = pytest.mark.usefixtures("x64")


class Simple(en.Module):
    """f(x, w) = (x + w)·x², w a parameter."""

    def __init__(self, w0: float) -> None:
        super().__init__(inputs=("x",))
        self.w = en.Parameter("w", w0)

    def call(self, x: en.Node) -> en.Node:
        return en.multiply(en.add(x, self.w), en.square(x))


def simple(x: jax.Array, w: jax.Array) -> jax.Array:
    return (x + w) * x**2


class NoSharingTwoInputs(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1", "x2"))
        self.m1, self.m2 = Simple(1.0), Simple(2.0)

    def call(self, x1: en.Node, x2: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m2(x2))


class WeightSharingTwoInputs(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1", "x2"))
        self.m1 = Simple(2.0)

    def call(self, x1: en.Node, x2: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m1(x2))


class NoWeightSharingSameInput(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1",))
        self.m1, self.m2 = Simple(1.0), Simple(-0.5)

    def call(self, x1: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m2(x1))


class WeightSharingSameInput(en.Module):
    def __init__(self) -> None:
        super().__init__(inputs=("x1",))
        self.m1 = Simple(1.5)

    def call(self, x1: en.Node) -> en.Node:
        return en.add(self.m1(x1), self.m1(x1))


# model, the same in JAX as a function of (inputs..., parameters...), parameter names, input count,
# and how many parameter / input leaves the flat graph must hold.
Case = tuple[Callable[[], en.Module], Callable[..., jax.Array], tuple[str, ...], int, int, int]
CASES: dict[str, Case] = {
    "no_weight_sharing_no_input_sharing": (
        NoSharingTwoInputs, lambda x1, x2, w1, w2: simple(x1, w1) + simple(x2, w2), ("m1.w", "m2.w"), 2, 2, 2,
    ),
    "weight_sharing_no_input_sharing": (
        WeightSharingTwoInputs, lambda x1, x2, w: simple(x1, w) + simple(x2, w), ("m1.w",), 2, 1, 2,
    ),
    "no_weight_sharing_input_sharing": (
        NoWeightSharingSameInput, lambda x1, w1, w2: simple(x1, w1) + simple(x1, w2), ("m1.w", "m2.w"), 1, 2, 1,
    ),
    "weight_sharing_input_sharing": (
        WeightSharingSameInput, lambda x1, w: simple(x1, w) + simple(x1, w), ("m1.w",), 1, 1, 1,
    ),
}

INPUTS: dict[str, list[Any]] = {
    "scalar": [3.0, 4.0],
    "vector": [np.array([3.0, -1.0, 0.5]), np.array([4.0, 2.0, -2.5])],
    "matrix": [np.arange(6.0).reshape(2, 3) - 2.0, np.linspace(-1, 1, 6).reshape(2, 3)],
}


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


def test_simple_model_matches_the_zkynet_example() -> None:
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
