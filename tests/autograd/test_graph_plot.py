"""The layered layout of a graph, and the PNG drawn from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from jax_benchmarks import autodiff as en
from jax_benchmarks.autodiff.layout import layered_layout
from jax_benchmarks.autodiff.plot import node_text, plot_graph
from jax_benchmarks.autograd.numpy_backend import make_function


def test_every_operator_sits_above_its_inputs_and_the_output_on_top() -> None:
    root = make_function()(np.zeros(5))
    layout = layered_layout(root)
    for parent, child in layout.edges:
        assert layout.position(parent)[1] < layout.position(child)[1]
    assert layout.position(root)[1] == layout.layer_count - 1
    assert len(layout.nodes) == 9  # x, 2 constants, multiply×2, sin, cos, add×2
    assert len(set(layout.positions.values())) == len(layout.nodes)  # no two nodes on one spot


def test_labels_name_the_operator_and_the_shape() -> None:
    root = make_function()(np.zeros((2, 3)))
    assert node_text(root) == "add\n(2, 3)"
    texts = {node_text(n) for n in layered_layout(root).nodes}
    assert {"x\n(2, 3)", "sin\n(2, 3)", "0.2\nscalar", "2\nscalar"} <= texts


def test_plot_graph_writes_a_png(tmp_path: Path) -> None:
    class Affine(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.w = en.Parameter("w", np.ones((3, 2)))

        def call(self, x: en.Node) -> en.Node:
            return en.mean(en.relu(en.matmul(x, self.w)))

    path = plot_graph(Affine()(np.ones((4, 3))), "affine", "affine", directory=tmp_path)
    assert path == tmp_path / "affine.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as image:
        image.verify()
