"""A small MLP trained with the engine follows JAX's loss curve step for step (same init, data, lr)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jax_benchmarks import autodiff as en

pytestmark = pytest.mark.usefixtures("x64")

STEPS, LR = 6, 0.1


class Linear(en.Module):
    def __init__(self, name: str, weight: np.ndarray, bias: np.ndarray) -> None:
        super().__init__(inputs=("x",), name=name)
        self.w = en.Parameter("w", weight)
        self.b = en.Parameter("b", bias)

    def call(self, x: en.Node) -> en.Node:
        return en.add(en.matmul(x, self.w), self.b)  # bias broadcast over the batch


class MLP(en.Module):
    def __init__(self, params: dict[str, np.ndarray]) -> None:
        super().__init__(inputs=("x",))
        self.hidden = Linear("hidden", params["w1"], params["b1"])
        self.out = Linear("out", params["w2"], params["b2"])

    def call(self, x: en.Node) -> en.Node:
        return self.out(en.relu(self.hidden(x)))


class MSE(en.Module):
    def __init__(self, model: en.Module) -> None:
        super().__init__(inputs=("x", "y"))
        self.model = model

    def call(self, x: en.Node, y: en.Node) -> en.Node:
        return en.mean(en.square(en.subtract(self.model(x), y)))


def init(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": rng.normal(0, 0.5, (3, 8)), "b1": rng.normal(0, 0.1, (8,)),
        "w2": rng.normal(0, 0.5, (8, 1)), "b2": np.zeros(1),
    }


def jax_loss(p: dict[str, jax.Array], x: jax.Array, y: jax.Array) -> jax.Array:
    h = jax.nn.relu(x @ p["w1"] + p["b1"])
    return jnp.mean(jnp.square(h @ p["w2"] + p["b2"] - y))


def test_mlp_loss_curve_matches_jax() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32, 3))
    y = np.sin(x.sum(axis=1, keepdims=True))
    start = init(rng)

    objective = MSE(MLP(start))
    engine_losses = []
    for _ in range(STEPS):
        loss = objective(x, y)
        engine_losses.append(float(loss.value))
        en.sgd_step(objective, loss, LR)

    params = {k: jnp.asarray(v) for k, v in start.items()}
    value_and_grad = jax.jit(jax.value_and_grad(jax_loss))
    jax_losses = []
    for _ in range(STEPS):
        value, grads = value_and_grad(params, jnp.asarray(x), jnp.asarray(y))
        jax_losses.append(float(value))
        params = {k: params[k] - LR * grads[k] for k in params}

    np.testing.assert_allclose(engine_losses, jax_losses, atol=1e-6, rtol=0)
    assert engine_losses[-1] < engine_losses[0]  # it trained
    names = set(objective.parameters())
    assert names == {"model.hidden.w", "model.hidden.b", "model.out.w", "model.out.b"}
    np.testing.assert_allclose(objective.param("model.out.w").value, np.asarray(params["w2"]), atol=1e-6)
