"""Draw a computational graph as a PNG with matplotlib, from the layered layout."""

from __future__ import annotations

from pathlib import Path

from jax_benchmarks.autodiff.graph import Node
from jax_benchmarks.autodiff.layout import Vertex, layered_layout
from jax_benchmarks.cli.plots import PLOTS_DIR, new_figure, save_figure

COLOURS = {"input": "#9ecae1", "param": "#fdae6b", "const": "#d9d9d9", "op": "#a1d99b", "elided": "#ffffff"}


def shape_text(shape: tuple[int, ...], batch: int | None = None) -> str:
    """(2, 3), scalar for 0-d, and N for a leading dimension equal to the batch size when one is given."""
    if not shape:
        return "scalar"
    if batch is not None and shape[0] == batch:
        return "(" + ", ".join(["N", *map(str, shape[1:])]) + (",)" if len(shape) == 1 else ")")
    return str(shape)


def node_text(item: Node | Vertex, batch: int | None = None) -> str:
    """Operator or variable name (×count for a vertex of several nodes), and the value's shape."""
    if isinstance(item, Node):
        return f"{item.label}\n{shape_text(item.shape, batch)}"
    if item.kind == "elided":
        return item.label
    count = f" ×{item.count:,}" if item.count > 1 else ""
    return f"{item.label}{count}\n{shape_text(item.shape, batch)}"


def plot_graph(root: Node, name: str, title: str, directory: Path = PLOTS_DIR, batch: int | None = None) -> Path:
    """Write `<directory>/<name>.png` showing the graph `root` depends on, collapsed as `layered_layout`
    says (repeated nodes as one box, at most MAX_VERTICES boxes); returns the path."""
    from matplotlib.patches import Patch

    layout = layered_layout(root)
    fig = new_figure(width=max(5.0, 1.5 * layout.max_width + 1), height=max(3.0, 1.1 * layout.layer_count + 1))
    ax = fig.add_subplot()
    for parent, child in layout.edges:
        ax.annotate(
            "", xy=layout.position(child), xytext=layout.position(parent),
            arrowprops={"arrowstyle": "-|>", "color": "#555555", "shrinkA": 16, "shrinkB": 16, "lw": 1.0},
        )
    top = layout.vertex_of[id(root)]
    for vertex in layout.nodes:
        x, y = layout.position(vertex)
        edge = "black" if vertex is top else "#444444"
        ax.text(
            x, y, node_text(vertex, batch), ha="center", va="center", fontsize=8, zorder=3,
            bbox={"boxstyle": "round,pad=0.4", "fc": COLOURS[vertex.kind], "ec": edge, "lw": 2 if vertex is top else 1},
        )
    xs = [x for x, _ in layout.positions.values()]
    ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
    ax.set_ylim(-0.6, layout.layer_count - 0.4)
    ax.axis("off")
    if layout.node_count != len(layout.nodes):
        title = f"{title}\n{layout.node_count:,} nodes drawn as {len(layout.nodes)} boxes (×n: n nodes computed alike)"
    ax.set_title(title, fontsize=10)
    ax.legend(
        handles=[
            Patch(facecolor=c, edgecolor="#444444", label=k)
            for k, c in COLOURS.items() if any(v.kind == k for v in layout.nodes)
        ],
        loc="upper left", fontsize=7, frameon=False,
    )
    return save_figure(fig, name, directory)
