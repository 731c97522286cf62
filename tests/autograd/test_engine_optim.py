"""`grad(f, wrt)` against jax.grad on the group's f, and every optimizer against its torch.optim namesake,
step by step (20 steps, float64, 1e-10) on the same small network and data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

from jax_benchmarks import autodiff as en
from jax_benchmarks.autograd.numpy_backend import make_function
from jax_benchmarks.example_function.in_jax import f as jax_f

STEPS = 20


def test_grad_of_f_matches_jax_grad_at_new_inputs(x64: None) -> None:
    df = en.grad(make_function(), "x")
    for x in (3.0, -1.25, 0.0, 17.5):
        np.testing.assert_allclose(df(np.float64(x)), float(jax.grad(jax_f)(jnp.float64(x))), rtol=0, atol=1e-12)
    points = np.linspace(0.0, 10 * np.pi, 50)
    np.testing.assert_allclose(df(points), np.asarray(jax.vmap(jax.grad(jax_f))(jnp.asarray(points))), atol=1e-12)
    assert en.grad(make_function())(3.0) == pytest.approx(-0.2311615, abs=1e-7)  # default: the first input


def test_grad_takes_inputs_by_name_and_several_targets() -> None:
    """zkynet's m.grad_fn('w')(x=3, w=1): d(w·x²)/dw = x², d/dx = 2wx."""
    m = en.Function(lambda x, w: w * x * x, inputs=("x", "w"))
    assert en.grad(m, "w")(x=3.0, w=1.0) == 9.0
    dx, dw = en.grad(m, ("x", "w"))(3.0, w=2.0)
    assert (dx, dw) == (12.0, 9.0)
    with pytest.raises(KeyError, match="no input named 'z'"):
        en.grad(m, "z")
    with pytest.raises(TypeError, match="missing: \\['w'\\]"):
        en.grad(m, "x")(x=1.0)


def test_grad_with_respect_to_a_parameter() -> None:
    class Scale(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.w = en.Parameter("w", np.array([1.0, 2.0]))

        def call(self, x: en.Node) -> en.Node:
            return en.sum(self.w * x * x)

    model = Scale()
    np.testing.assert_array_equal(en.grad(model, model.w)(np.array([3.0, 4.0])), [9.0, 16.0])


class Net(en.Module):
    """2 → 3 → 1 with tanh, the weights given (torch's Linear stores them out × in)."""

    def __init__(self, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> None:
        super().__init__(inputs=("x", "y"))
        self.w1, self.b1, self.w2 = en.Parameter("w1", w1), en.Parameter("b1", b1), en.Parameter("w2", w2)

    def call(self, x: en.Node, y: en.Node) -> en.Node:
        hidden = en.tanh(x @ self.w1.T + self.b1)
        return en.mean(en.square(hidden @ self.w2.T - y))


OPTIMIZERS: list[tuple[str, Callable[[en.Module], en.Optimizer], Callable[[list[torch.Tensor]], torch.optim.Optimizer]]] = [
    ("sgd", lambda m: en.SGD(m, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    ("sgd_momentum", lambda m: en.SGD(m, lr=0.05, momentum=0.9), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    ("sgd_nesterov", lambda m: en.SGD(m, lr=0.05, momentum=0.8, nesterov=True),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.8, nesterov=True)),
    ("adam", lambda m: en.Adam(m, lr=0.01), lambda p: torch.optim.Adam(p, lr=0.01)),
    ("adam_betas_eps", lambda m: en.Adam(m, lr=0.03, betas=(0.8, 0.99), eps=1e-6),
     lambda p: torch.optim.Adam(p, lr=0.03, betas=(0.8, 0.99), eps=1e-6)),
    ("rmsprop", lambda m: en.RMSprop(m, lr=0.01), lambda p: torch.optim.RMSprop(p, lr=0.01)),
    ("rmsprop_momentum", lambda m: en.RMSprop(m, lr=0.005, alpha=0.9, eps=1e-7, momentum=0.5),
     lambda p: torch.optim.RMSprop(p, lr=0.005, alpha=0.9, eps=1e-7, momentum=0.5)),
]


@pytest.mark.parametrize(("name", "engine_opt", "torch_opt"), OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_optimizer_matches_torch_optim_step_by_step(
    name: str, engine_opt: Callable[[en.Module], en.Optimizer], torch_opt: Callable[[list[torch.Tensor]], Any]
) -> None:
    rng = np.random.default_rng(3)
    initial = [rng.normal(size=(3, 2)), rng.normal(size=3), rng.normal(size=(1, 3))]
    x, y = rng.normal(size=(8, 2)), rng.normal(size=(8, 1))
    model = Net(*initial)
    optimizer = engine_opt(model)
    tensors = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in initial]
    reference = torch_opt(tensors)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    moved = 0.0
    for _ in range(STEPS):
        optimizer.step(model(x, y))
        reference.zero_grad()
        w1, b1, w2 = tensors
        torch.mean(torch.square(torch.tanh(tx @ w1.T + b1) @ w2.T - ty)).backward()
        reference.step()
        for param, tensor in zip((model.w1, model.b1, model.w2), tensors, strict=True):
            np.testing.assert_allclose(param.value, tensor.detach().numpy(), rtol=0, atol=1e-10)
    for param, start in zip((model.w1, model.b1, model.w2), initial, strict=True):
        moved = max(moved, float(np.max(np.abs(param.value - start))))
    assert moved > 1e-2  # the comparison is of parameters that did move


def test_optimizers_refuse_a_learning_rate_of_zero_and_nesterov_without_momentum() -> None:
    model = Net(np.ones((3, 2)), np.ones(3), np.ones((1, 3)))
    with pytest.raises(ValueError, match="learning rate must be > 0"):
        en.Adam(model, lr=0.0)
    with pytest.raises(ValueError, match="Nesterov"):
        en.SGD(model, lr=0.1, nesterov=True)
