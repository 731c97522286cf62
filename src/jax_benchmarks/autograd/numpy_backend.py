"""`autograd numpy`: the project's own reverse-mode engine (src/jax_benchmarks/autodiff) on NumPy arrays.

Two ways to get f′ at N points: one graph over the whole vector (the engine's
VJP of an elementwise f seeded with ones is the derivative at every point),
and one graph per point, like PyTorch's per-element backward() loop.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from jax_benchmarks.autograd.cases import gradient_suite
from jax_benchmarks.autograd.cnn import CnnTrainer, MnistCNN, nll_loss
from jax_benchmarks.autograd.cnn_cases import Batch, cnn_suite
from jax_benchmarks.autodiff import FloatArray, Function, Module, Node
from jax_benchmarks.autodiff.plot import plot_graph
from jax_benchmarks.autograd.reference import Points
from jax_benchmarks.autograd.settings import EngineSettings
from jax_benchmarks.frameworks.arrays import NumpyArrays, cpu_only_suites
from jax_benchmarks.measure.harness import Suite
from jax_benchmarks.run import Run
from jax_benchmarks.example_function.in_numpy import f as numpy_f


def engine_f(x: Node) -> Node:
    """The one NumPy f (src/jax_benchmarks/example_function/in_numpy.py) called on an engine node: `*` and `+` are the node's operators
    and NumPy hands np.sin / np.cos of a node to the node's `__array_ufunc__`, so the call records the
    engine's graph (multiply, sin, add, multiply, cos, add) instead of computing an array."""
    return cast(Node, numpy_f(cast(Any, x)))


def make_function() -> Function:
    return Function(engine_f, inputs=("x",), name="f")


def value(f: Module, x: FloatArray) -> FloatArray:
    return f(x).value


def vectorised_grad(f: Module, x: FloatArray) -> FloatArray:
    """f′ at every point of x from ONE graph: backward() seeds the output with ones."""
    out = f(x)
    out.backward()
    return out.grad("x")


def loop_grad(f: Module, x: FloatArray) -> FloatArray:
    """f′ point by point: a fresh graph and a scalar backward() per point."""
    return np.array([vectorised_grad(f, point) for point in x], dtype=x.dtype)


def draw_graph(f: Module, settings: EngineSettings, run: Run) -> None:
    """The engine's graph of f over the timed points, as a PNG (one untimed call)."""
    points = Points.make(settings.dtype, settings.points)
    output = f(points.timed)
    path = plot_graph(
        output,
        name=f"autograd_engine_graph_{points.case}",
        title=f"engine graph of the last call: f(x) = 0.2·x + sin(x) + cos(2x), x of shape {output.shape}",
    )
    run.log(f"computational graph written to {path}")


class EngineCnnBench:
    """The mnist CNN's train step in the engine (src/jax_benchmarks/autograd/cnn.py), on one batch."""

    def __init__(self, batch: Batch) -> None:
        self.batch = batch
        self.trainer = CnnTrainer(MnistCNN(seed=0, dtype=batch.images.dtype))

    def step(self) -> float:
        return self.trainer.step(self.batch.images, self.batch.labels)

    def batch_loss(self) -> float:
        return self.trainer.loss(self.batch.images, self.batch.labels)


def draw_cnn_graph(run: Run, batch: Batch) -> None:
    """The engine's graph of one CNN forward pass and loss on the case's batch, the batch shown as N."""
    model = MnistCNN(seed=0, dtype=batch.images.dtype)
    loss = nll_loss(model(batch.images), batch.labels)
    path = plot_graph(loss, name=f"autograd_engine_graph_cnn_{len(batch.labels)}",
                      title=f"engine graph of the mnist CNN's loss, N = {len(batch.labels)} images",
                      batch=len(batch.labels))
    run.log(f"computational graph of the CNN written to {path}")


def suites(settings: EngineSettings) -> list[Suite]:
    f = make_function()
    return cpu_only_suites("numpy", "the engine (on NumPy arrays)", settings.device, lambda: [
        gradient_suite(
            "numpy", NumpyArrays(), settings,
            value=lambda x: value(f, x),
            gradients=[("loop", lambda x: loop_grad(f, x)), ("vectorised", lambda x: vectorised_grad(f, x))],
            after=(lambda run: draw_graph(f, settings, run)) if settings.plot_graph else None,
        ),
        cnn_suite("numpy", "cpu", settings, EngineCnnBench, after=draw_cnn_graph if settings.plot_graph else None),
    ])
