"""The engine against PyTorch in float64, in the manner of the classic small-engine suites.

micrograd's test_engine.py (test_sanity_check, test_more_ops): scalar expressions
mixing every operator, one input reused many times; tinygrad's early test_ops.py
style: each operator on random matrices, value and input gradients, and its early
test_tensor.py backward pass (dot, relu, log_softmax, mul, add, sum); four
composite models (weight sharing × input sharing, tests/autograd/composites.py) and a
micrograd-style MLP of modules with parameters. Values and gradients must equal
PyTorch's to 1e-6.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from jax_benchmarks import autodiff as en
from tests.autograd.composites import CASES as COMPOSITES, INPUTS as COMPOSITE_INPUTS

TOL = 1e-6


def compare(engine_fn: Callable[..., Any], torch_fn: Callable[..., Any], *args: np.ndarray) -> None:
    """Value and every input's gradient (of sum(output)) of engine_fn and torch_fn on the same inputs."""
    names = [f"a{i}" for i in range(len(args))]
    out = en.Function(engine_fn, inputs=names)(*args)
    out.backward()
    tensors = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in args]
    expected = torch_fn(*tensors)
    expected.sum().backward()
    np.testing.assert_allclose(out.value, expected.detach().numpy(), atol=TOL, rtol=0)
    for name, tensor in zip(names, tensors, strict=True):
        assert tensor.grad is not None
        np.testing.assert_allclose(out.grad(name), tensor.grad.numpy(), atol=TOL, rtol=0)


def test_scalar_expression_with_a_reused_input() -> None:
    def expression(x: Any, relu: Callable[[Any], Any]) -> Any:
        z = 2 * x + 2 + x
        q = relu(z) + z * x
        h = relu(z * z)
        return h + q + q * x

    compare(lambda x: expression(x, en.relu), lambda x: expression(x, torch.relu), np.array(-4.0))


def test_scalar_expression_with_every_arithmetic_operator() -> None:
    def expression(a: Any, b: Any, relu: Callable[[Any], Any]) -> Any:
        c = a + b
        d = a * b + b**3
        c = c + c + 1
        c = c + 1 + c + (-a)
        d = d + d * 2 + relu(b + a)
        d = d + 3 * d + relu(b - a)
        e = c - d
        f = e**2
        g = f / 2.0
        return g + 10.0 / f

    compare(lambda a, b: expression(a, b, en.relu), lambda a, b: expression(a, b, torch.relu),
            np.array(-4.0), np.array(2.0))


def test_scalar_expression_with_the_new_operators() -> None:
    def expression(x: Any, y: Any, lib: Any) -> Any:
        s = lib.sigmoid(x * y) + lib.tanh(x - y)
        return lib.sqrt(abs(s * x) + 1.0) * lib.maximum(x, y) + lib.exp(-abs(y)) / lib.sqrt(x * x + 2.0)

    compare(lambda x, y: expression(x, y, en), lambda x, y: expression(x, y, torch), np.array(0.7), np.array(-1.3))


MATRIX_OPS: list[tuple[str, Callable[..., Any], Callable[..., Any], int]] = [
    ("add", lambda a, b: a + b, lambda a, b: a + b, 2),
    ("sub", lambda a, b: a - b, lambda a, b: a - b, 2),
    ("mul", lambda a, b: a * b, lambda a, b: a * b, 2),
    ("div", lambda a, b: a / b, lambda a, b: a / b, 2),
    ("pow", lambda a, b: abs(a) ** b, lambda a, b: abs(a) ** b, 2),
    ("sqrt", lambda a: en.sqrt(abs(a)), lambda a: torch.sqrt(abs(a)), 1),
    ("relu", en.relu, torch.relu, 1),
    ("sigmoid", en.sigmoid, torch.sigmoid, 1),
    ("tanh", en.tanh, torch.tanh, 1),
    ("abs", en.abs, torch.abs, 1),
    ("exp", en.exp, torch.exp, 1),
    ("log", lambda a: en.log(abs(a)), lambda a: torch.log(abs(a)), 1),
    ("maximum", en.maximum, torch.maximum, 2),
    ("max_all", en.max, torch.amax, 1),
    ("max_axis1", lambda a: a.max(axis=1), lambda a: torch.amax(a, dim=1), 1),
    ("sum_axis0", lambda a: a.sum(axis=0), lambda a: a.sum(dim=0), 1),
    ("mean", lambda a: a.mean(), lambda a: a.mean(), 1),
    ("matmul", lambda a, b: a @ b.T, lambda a, b: a @ b.T, 2),
    ("dot", lambda a, b: en.dot(a, en.transpose(b)), lambda a, b: a @ b.T, 2),
    ("reshape", lambda a: a.reshape(5, 3) * np.arange(15.0).reshape(5, 3),
     lambda a: a.reshape(5, 3) * torch.arange(15.0).reshape(5, 3), 1),
    ("transpose", lambda a: a.T * np.arange(15.0).reshape(5, 3), lambda a: a.T * torch.arange(15.0).reshape(5, 3), 1),
    ("log_softmax", lambda a: a.log_softmax() * np.arange(5.0),
     lambda a: torch.log_softmax(a, dim=-1) * torch.arange(5.0), 1),
]


@pytest.mark.parametrize(("name", "engine_fn", "torch_fn", "arity"), MATRIX_OPS, ids=[op[0] for op in MATRIX_OPS])
def test_operator_on_matrices_matches_torch(name: str, engine_fn: Callable[..., Any], torch_fn: Callable[..., Any],
                                            arity: int) -> None:
    rng = np.random.default_rng(len(name))
    args = [rng.uniform(0.5, 2.0, size=(3, 5)) * rng.choice([-1, 1], size=(3, 5)) for _ in range(arity)]
    compare(engine_fn, torch_fn, *args)


def test_tinygrad_backward_pass() -> None:
    """tinygrad's early test_tensor.py: out = (x·W).relu().logsoftmax(); (out·m + m).sum(), m a row."""
    rng = np.random.default_rng(0)
    x, w, m = rng.normal(size=(1, 3)), rng.normal(size=(3, 3)), rng.normal(size=(1, 3))

    def engine_fn(x: Any, w: Any, m: Any) -> Any:
        out = en.dot(x, w).relu().log_softmax()
        return (out * m + m).sum()

    def torch_fn(x: Any, w: Any, m: Any) -> Any:
        out = torch.log_softmax(x.matmul(w).relu(), dim=1)
        return out.mul(m).add(m).sum()

    compare(engine_fn, torch_fn, x, w, m)


@pytest.mark.parametrize("kind", COMPOSITE_INPUTS)
@pytest.mark.parametrize("case", COMPOSITES)
def test_composite_models_match_torch(case: str, kind: str) -> None:
    build, reference, param_names, n_inputs, _, _ = COMPOSITES[case]
    model = build()
    inputs = COMPOSITE_INPUTS[kind][:n_inputs]
    params = [model.param(name) for name in param_names]
    out = model(*inputs)
    out.backward()  # a non-scalar output: the gradient of sum(out)
    tensors = [torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in [*inputs, *[p.value for p in params]]]
    expected = reference(*tensors)
    expected.sum().backward()
    np.testing.assert_allclose(out.value, expected.detach().numpy(), atol=TOL, rtol=0)
    got = [out.grad(name) for name in model.input_names] + [out.grad(p) for p in params]
    for value, tensor in zip(got, tensors, strict=True):
        assert tensor.grad is not None
        np.testing.assert_allclose(value, tensor.grad.numpy(), atol=TOL, rtol=0)


class Neuron(en.Module):
    """micrograd's neuron on scalars: tanh(Σ wᵢ·xᵢ + b), its weights a list of Parameters."""

    def __init__(self, inputs: int, rng: np.random.Generator) -> None:
        super().__init__(inputs=tuple(f"x{i}" for i in range(inputs)))
        self.w = [en.Parameter("w", rng.uniform(-1, 1)) for _ in range(inputs)]
        self.b = en.Parameter("b", 0.0)

    def call(self, *x: Any) -> en.Node:
        total: Any = self.b
        for w, xi in zip(self.w, x, strict=True):
            total = w * xi + total
        return en.tanh(total)


class ScalarMLP(en.Module):
    """Layers as lists of neurons; the inputs are Python floats, every node a scalar."""

    def __init__(self, sizes: list[int], rng: np.random.Generator) -> None:
        super().__init__(inputs=())
        self.layers = [[Neuron(n_in, rng) for _ in range(n_out)] for n_in, n_out in zip(sizes, sizes[1:])]
        self.points: list[list[float]] = []

    def call(self) -> en.Node:
        losses = []
        for point in self.points:
            values: list[Any] = point
            for layer in self.layers:
                values = [neuron(*values) for neuron in layer]
            losses.append((values[0] - 0.5) ** 2)
        total = losses[0]
        for loss in losses[1:]:
            total = total + loss
        return total


def test_scalar_mlp_gradients_match_torch() -> None:
    rng = np.random.default_rng(3)
    model = ScalarMLP([2, 4, 4, 1], rng)
    model.points = [[0.5, -1.0], [2.0, 0.3], [-0.7, 0.1]]
    params = model.parameters()
    assert len(params) == (2 + 1) * 4 + (4 + 1) * 4 + (4 + 1) * 1
    assert "layers.0.0.w.1" in params and "layers.2.0.b" in params  # found inside nested lists
    loss = model()
    loss.backward()

    tensors = {name: torch.tensor(p.value, dtype=torch.float64, requires_grad=True) for name, p in params.items()}
    total = torch.zeros((), dtype=torch.float64)
    for point in model.points:
        values = [torch.tensor(v, dtype=torch.float64) for v in point]
        for i, layer in enumerate(model.layers):
            values = [
                torch.tanh(sum((tensors[f"layers.{i}.{j}.w.{k}"] * v for k, v in enumerate(values)),
                               tensors[f"layers.{i}.{j}.b"]))
                for j in range(len(layer))
            ]
        total = total + (values[0] - 0.5) ** 2
    total.backward()
    assert float(loss.value) == pytest.approx(total.item(), abs=TOL)
    for name, param in params.items():
        grad = tensors[name].grad
        assert grad is not None
        assert float(loss.grad(param)) == pytest.approx(float(grad), abs=TOL), name
