"""SGD-step time of micrograd's demo MLP (2 inputs, 16 and 16 relu neurons, 1 linear: 337 scalar parameters)
on the autograd engine as it is now and as it was at an earlier commit ("before").

Up to commit a5b1e6f, `loss.grad(p)` walked the whole graph once per parameter, so a step
cost parameters × nodes; the engine now walks it once per backward pass and looks each gradient up. The old engine is exported from git into a temporary
folder and timed in a subprocess; the model below uses only what both engines
support (parameters as attributes, sub-modules as attributes).

    .venv/bin/python benchmarks/autograd_sgd_step.py [--before a5b1e6f] [--points 8] [--steps 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "a5b1e6f"  # the last commit whose engine walked the graph once per gradient lookup
SIZES = (2, 16, 16, 1)


def build_model(en: Any, points: int) -> Any:
    """A scalar MLP whose loss sums (out - target)² over `points` fixed 2-D points (constants of the graph)."""
    import numpy as np

    rng = np.random.default_rng(0)
    data = rng.uniform(-1, 1, size=(points, 2)).tolist()
    targets = [1.0 if x * y > 0 else -1.0 for x, y in data]

    class Neuron(en.Module):
        def __init__(self, fan_in: int, name: str, nonlinear: bool) -> None:
            super().__init__(inputs=tuple(f"x{i}" for i in range(fan_in)), name=name)
            for i in range(fan_in):
                setattr(self, f"w{i}", en.Parameter(f"w{i}", rng.uniform(-1, 1)))
            self.b = en.Parameter("b", 0.0)
            self.nonlinear = nonlinear

        def call(self, *x: Any) -> Any:
            total = self.b
            for i, xi in enumerate(x):
                total = en.add(en.multiply(getattr(self, f"w{i}"), xi), total)
            return en.relu(total) if self.nonlinear else total

    class Loss(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=())
            self.layer_sizes = [(n_in, n_out) for n_in, n_out in zip(SIZES, SIZES[1:])]
            for layer, (n_in, n_out) in enumerate(self.layer_sizes):
                for j in range(n_out):
                    last = layer == len(self.layer_sizes) - 1
                    setattr(self, f"n{layer}_{j}", Neuron(n_in, f"n{layer}_{j}", nonlinear=not last))

        def call(self) -> Any:
            total: Any = 0.0
            for point, target in zip(data, targets):
                values: list[Any] = list(point)
                for layer, (_, n_out) in enumerate(self.layer_sizes):
                    values = [getattr(self, f"n{layer}_{j}")(*values) for j in range(n_out)]
                total = en.add(en.square(en.subtract(values[0], target)), total)
            return total

    return Loss()


def measure(points: int, steps: int) -> None:
    """Print one line: parameter count, graph size, and the seconds of each SGD step (forward + backward + update)."""
    from jax_benchmarks import autodiff as en
    from jax_benchmarks.autodiff.graph import graph_nodes

    model = build_model(en, points)
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        loss = model()
        en.sgd_step(model, loss, 0.05)
        seconds.append(time.perf_counter() - start)
    print(len(model.parameters()), len(graph_nodes(loss)), *seconds)


def run_engine(root: Path, points: int, steps: int) -> tuple[int, int, list[float]]:
    result = subprocess.run(
        [sys.executable, __file__, "--measure", "--points", str(points), "--steps", str(steps)],
        cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    )
    params, nodes, *seconds = result.stdout.split()
    return int(params), int(nodes), [float(s) for s in seconds]


def export(revision: str, folder: Path) -> None:
    """`src/` of `revision` into `folder` (git archive: no checkout, the work tree is untouched)."""
    archive = subprocess.run(["git", "archive", "--format=tar", revision, "src"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help=f"git revision of the old engine (default {BEFORE})")
    parser.add_argument("--points", type=int, default=8, help="training points in the loss (default 8)")
    parser.add_argument("--steps", type=int, default=3, help="SGD steps timed per engine (default 3)")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.points, args.steps)
        return
    with tempfile.TemporaryDirectory() as old:
        export(args.before, Path(old))
        rows = {f"before ({args.before})": run_engine(Path(old), args.points, args.steps),
                "now": run_engine(ROOT, args.points, args.steps)}
    print(f"SGD step of a {'-'.join(map(str, SIZES))} scalar MLP on {args.points} points (median of {args.steps} steps)")
    medians = {}
    for label, (params, nodes, seconds) in rows.items():
        medians[label] = statistics.median(seconds)
        print(f"  {label:<20} {params} parameters, {nodes:,} graph nodes: {medians[label]:.3f} s per step "
              f"({', '.join(f'{s:.3f}' for s in seconds)})")
    before, now = medians.values()
    print(f"  speed-up: {before / now:.0f}x")


if __name__ == "__main__":
    main()
