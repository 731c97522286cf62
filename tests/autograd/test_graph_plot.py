"""The layered layout of a graph, and the PNG drawn from it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from jax_benchmarks import autodiff as en
from jax_benchmarks.autodiff.layout import MAX_VERTICES, layered_layout
from jax_benchmarks.autodiff.plot import node_text, plot_graph
from jax_benchmarks.autograd.cnn import CnnShape, MnistCNN, nll_loss
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


def test_the_cnn_graph_collapses_the_batch_in_its_labels(tmp_path: Path) -> None:
    model = MnistCNN(seed=0, shape=CnnShape(conv1=4, conv2=8, hidden=16))
    root = nll_loss(model(np.zeros((4, 1, 28, 28), np.float32)), np.arange(4))
    layout = layered_layout(root)
    assert layout.node_count == len(layout.nodes) <= 40  # one box per operator and parameter, batch or not
    texts = {node_text(v, batch=4) for v in layout.nodes}
    assert {"conv2d\n(N, 8, 24, 24)", "max_pool2d\n(N, 8, 12, 12)", "flatten\n(N, 1152)", "conv2.w\n(8, 4, 3, 3)",
            "sum\nscalar"} <= texts
    path = plot_graph(root, "cnn", "cnn", directory=tmp_path, batch=4)
    with Image.open(path) as image:
        image.verify()


def test_repeated_nodes_are_drawn_once_with_their_count() -> None:
    """512 scalar neurons tanh(w·x + b), each with its own parameters, summed by a tree of adds."""

    class Neurons(en.Module):
        def __init__(self) -> None:
            super().__init__(inputs=("x",))
            self.weights = [en.Parameter(f"w{i}", 0.01 * i) for i in range(512)]
            self.biases = [en.Parameter(f"b{i}", 0.0) for i in range(512)]

        def call(self, x: en.Node) -> en.Node:
            level = [en.tanh(w * x + b) for w, b in zip(self.weights, self.biases, strict=True)]
            while len(level) > 1:
                level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
            return level[0]

    layout = layered_layout(Neurons()(0.5))
    assert layout.node_count == 1 + 1024 + 3 * 512 + 511
    texts = {node_text(v) for v in layout.nodes}
    assert {"param ×1,024\nscalar", "multiply ×512\nscalar", "tanh ×512\nscalar", "add ×256\nscalar",
            "add\nscalar"} <= texts
    assert len(layout.nodes) == 2 + 3 + 9  # x, param; multiply, add, tanh; one add per level of the tree
    for parent, child in layout.edges:
        assert layout.position(parent)[1] < layout.position(child)[1]


def test_a_long_chain_draws_the_top_layers_and_one_box_for_the_rest() -> None:
    def chain(x: en.Node) -> en.Node:
        for step in range(20_000):
            x = en.sin(x) if step % 2 else en.cos(x)
        return x

    layout = layered_layout(en.Function(chain, inputs=("x",))(0.1))
    assert layout.node_count == 20_001
    assert len(layout.nodes) <= MAX_VERTICES
    elided = [v for v in layout.nodes if v.kind == "elided"]
    assert len(elided) == 1 and elided[0].count == 20_001 - (len(layout.nodes) - 1)
    assert node_text(elided[0]) == f"… {elided[0].count:,} nodes"
