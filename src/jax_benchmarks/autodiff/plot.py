"""Draw a computational graph as a PNG with matplotlib, from the layered layout."""

from __future__ import annotations

from pathlib import Path

from jax_benchmarks.autodiff.graph import InputNode, Node
from jax_benchmarks.autodiff.layout import layered_layout
from jax_benchmarks.cli.plots import PLOTS_DIR, new_figure, save_figure

COLOURS = {"input": "#9ecae1", "param": "#fdae6b", "const": "#d9d9d9", "op": "#a1d99b"}


def node_text(node: Node) -> str:
    """Operator or variable name, and the value's shape (scalar for 0-d)."""
    shape = "scalar" if node.value.ndim == 0 else str(node.shape)
    return f"{node.label}\n{shape}"


def node_kind(node: Node) -> str:
    return node.kind if isinstance(node, InputNode) else "op"


def plot_graph(root: Node, name: str, title: str, directory: Path = PLOTS_DIR) -> Path:
    """Write `<directory>/<name>.png` showing every node `root` depends on; returns the path."""
    from matplotlib.patches import Patch

    layout = layered_layout(root)
    fig = new_figure(width=max(5.0, 1.5 * layout.max_width + 1), height=max(3.0, 1.1 * layout.layer_count + 1))
    ax = fig.add_subplot()
    for parent, child in layout.edges:
        ax.annotate(
            "", xy=layout.position(child), xytext=layout.position(parent),
            arrowprops={"arrowstyle": "-|>", "color": "#555555", "shrinkA": 16, "shrinkB": 16, "lw": 1.0},
        )
    for node in layout.nodes:
        x, y = layout.position(node)
        edge = "black" if node is root else "#444444"
        ax.text(
            x, y, node_text(node), ha="center", va="center", fontsize=8, zorder=3,
            bbox={"boxstyle": "round,pad=0.4", "fc": COLOURS[node_kind(node)], "ec": edge, "lw": 2 if node is root else 1},
        )
    xs = [x for x, _ in layout.positions.values()]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-0.6, layout.layer_count - 0.4)
    ax.axis("off")
    ax.set_title(title, fontsize=10)
    ax.legend(
        handles=[
            Patch(facecolor=c, edgecolor="#444444", label=k)
            for k, c in COLOURS.items() if any(node_kind(n) == k for n in layout.nodes)
        ],
        loc="upper left", fontsize=7, frameon=False,
    )
    return save_figure(fig, name, directory)
