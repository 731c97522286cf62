"""`autograd numpy`: the project's own reverse-mode engine (src/autograd/engine) on NumPy arrays.

Two ways to get f′ at N points: one graph over the whole vector (the engine's
VJP of an elementwise f seeded with ones is the derivative at every point),
and one graph per point, like PyTorch's per-element backward() loop.
"""

from __future__ import annotations

import numpy as np

from src.autograd.engine import FloatArray, Function, Module, Node, cos, sin
from src.autograd.engine.plot import plot_graph
from src.autograd.harness import Target, Variant, run_target
from src.autograd.reference import Points
from src.autograd.settings import EngineSettings
from src.core.devices import cpu_library_runs
from src.core.results import Run
from src.core.timing import no_sync


def seed_f(x: Node) -> Node:
    """f(x) = 0.2·x + sin(x) + cos(2x), built from the engine's operators."""
    return 0.2 * x + sin(x) + cos(2.0 * x)


def make_function() -> Function:
    return Function(seed_f, inputs=("x",), name="f")


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


def run(settings: EngineSettings, run: Run) -> None:
    if not cpu_library_runs(settings.device):
        run.log("numpy: skipped: the engine runs on NumPy arrays, CPU only")
        return
    f = make_function()
    target = Target[FloatArray](
        backend="numpy",
        device="cpu",
        value=lambda x: value(f, x),
        variants=(
            Variant("loop", lambda x: loop_grad(f, x)),
            Variant("vectorised", lambda x: vectorised_grad(f, x)),  # last: its graph is the one plotted
        ),
        to_native=np.asarray,
        to_numpy=np.asarray,
        sync=no_sync,
    )
    run_target(run, settings, target)
    if settings.plot_graph and f.last_call is not None:
        points = Points.make(settings.dtype, settings.points)
        path = plot_graph(
            f.last_call,
            name=f"autograd_engine_graph_{points.case}",
            title=f"engine graph of the last call: f(x) = 0.2·x + sin(x) + cos(2x), x of shape {f.last_call.shape}",
        )
        run.log(f"computational graph written to {path}")
