"""A layered layout of a computational graph (no graphviz): leaves at the bottom, the output on top.

The graph is first collapsed into vertices, so that a big graph stays readable and never draws more than
`MAX_VERTICES` boxes:

1. repeated nodes: nodes computed alike are one vertex, shown "×count". Leaves are alike when they are of
   one kind (input, param) and shape (a constant also needs its value); an operator node when it has the
   same operator, shape and parent vertices. The 337 scalar parameters and 5,746 nodes of a scalar MLP
   become one vertex per layer's operation; the 9 nodes of f stay 9.
2. if that is still too many (a long chain of different nodes), nodes are merged by operator and layer;
3. if even that is too many, only the layers nearest the output are drawn, and one vertex stands for all
   the nodes below them ("… n nodes").

The batch is collapsed in the labels: given the batch size, a leading dimension equal to it is shown as N.

Operators sit one layer above their highest input (longest path from the leaves); a leaf sits just
below its first consumer, so a constant is drawn next to the operator that uses it. Within a layer,
vertices are ordered by the mean position of their neighbours (the barycenter heuristic) to cut crossings.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from jax_benchmarks.autodiff.graph import InputNode, Node, graph_nodes

SWEEPS = 4
MAX_VERTICES = 150  # boxes a readable PNG can hold


@dataclass(eq=False)
class Vertex:
    """One box of the drawing: one node, or several nodes computed alike."""

    label: str
    kind: str  # input, param, const, op, or elided (the nodes below the layers drawn)
    shape: tuple[int, ...]
    count: int = 1
    parents: list[Vertex] = field(default_factory=list)

    def add_parent(self, parent: Vertex) -> None:
        if all(parent is not known for known in self.parents):
            self.parents.append(parent)


def node_kind(node: Node) -> str:
    return node.kind if isinstance(node, InputNode) else "op"


@dataclass(frozen=True)
class Layout:
    nodes: tuple[Vertex, ...]
    edges: tuple[tuple[Vertex, Vertex], ...]  # (input, consumer)
    positions: dict[int, tuple[float, float]]  # id(vertex) -> (x, layer)
    vertex_of: dict[int, Vertex]  # id(node) -> the vertex drawing it
    node_count: int  # nodes of the graph (vertices may stand for several)

    def position(self, item: Vertex | Node) -> tuple[float, float]:
        vertex = item if isinstance(item, Vertex) else self.vertex_of[id(item)]
        return self.positions[id(vertex)]

    @property
    def layer_count(self) -> int:
        return 1 + int(max(y for _, y in self.positions.values()))

    @property
    def max_width(self) -> int:
        counts: dict[float, int] = {}
        for _, y in self.positions.values():
            counts[y] = counts.get(y, 0) + 1
        return max(counts.values())


def layered_layout(root: Node, max_vertices: int = MAX_VERTICES) -> Layout:
    nodes = graph_nodes(root)
    depth = node_layers(nodes)
    vertex_of = collapse(nodes, lambda node, parents: structure_key(node, parents))
    if len(set(map(id, vertex_of.values()))) > max_vertices:
        vertex_of = collapse(nodes, lambda node, _parents: (node.label, node_kind(node), depth[id(node)]))
    if len(set(map(id, vertex_of.values()))) > max_vertices:
        vertex_of = elide_lower_layers(nodes, vertex_of, depth, max_vertices)
    vertices = list({id(v): v for v in (vertex_of[id(n)] for n in nodes)}.values())  # topological, once each
    consumers: dict[int, list[Vertex]] = {id(v): [] for v in vertices}
    for vertex in vertices:
        for parent in vertex.parents:
            consumers[id(parent)].append(vertex)
    layer = _assign_layers(vertices, consumers)
    rows = [[v for v in vertices if layer[id(v)] == i] for i in range(max(layer.values()) + 1)]
    _order_rows(rows, consumers)
    positions = {
        id(vertex): (index - (len(row) - 1) / 2, float(i)) for i, row in enumerate(rows) for index, vertex in enumerate(row)
    }
    edges = tuple((parent, vertex) for vertex in vertices for parent in vertex.parents)
    return Layout(tuple(vertices), edges, positions, vertex_of, len(nodes))


def node_layers(nodes: list[Node]) -> dict[int, int]:
    """Longest path from the leaves, per node (nodes in topological order)."""
    depth: dict[int, int] = {}
    for node in nodes:
        depth[id(node)] = 1 + max((depth[id(p)] for p in node.parents), default=-1)
    return depth


def structure_key(node: Node, parents: tuple[Vertex, ...]) -> Hashable:
    """Nodes computed alike: leaves by kind and shape (and value for a constant, name for an input), an
    operator by name, shape and parent vertices."""
    if isinstance(node, InputNode):
        return (node.kind, node.shape, node.label if node.kind != "param" else "")
    return (node.label, node.shape, tuple(id(p) for p in parents))


def collapse(nodes: list[Node], key: Callable[[Node, tuple[Vertex, ...]], Hashable]) -> dict[int, Vertex]:
    """Every node's vertex: nodes with one key share one (nodes in topological order)."""
    vertex_of: dict[int, Vertex] = {}
    by_key: dict[Hashable, Vertex] = {}
    for node in nodes:
        parents = tuple(vertex_of[id(p)] for p in node.parents)
        k = key(node, parents)
        vertex = by_key.get(k)
        if vertex is None:
            vertex = by_key[k] = Vertex(node.label, node_kind(node), node.shape, count=0)
        vertex.count += 1
        for parent in parents:
            if parent is not vertex:
                vertex.add_parent(parent)
        vertex_of[id(node)] = vertex
    for vertex in by_key.values():  # several parameters in one vertex: name the kind, not one of them
        if vertex.kind == "param" and vertex.count > 1:
            vertex.label = "param"
    return vertex_of


def elide_lower_layers(nodes: list[Node], vertex_of: dict[int, Vertex], depth: dict[int, int],
                       max_vertices: int) -> dict[int, Vertex]:
    """Keep the vertices of the top layers (at most max_vertices - 1 of them); one vertex for the rest."""
    layers: dict[int, set[int]] = {}
    for node in nodes:
        layers.setdefault(depth[id(node)], set()).add(id(vertex_of[id(node)]))
    kept_layers: set[int] = set()
    kept = 0
    for level in sorted(layers, reverse=True):
        if kept + len(layers[level]) > max_vertices - 1:
            break
        kept_layers.add(level)
        kept += len(layers[level])
    below = [node for node in nodes if depth[id(node)] not in kept_layers]
    elided = Vertex(f"… {len(below):,} nodes", "elided", (), count=len(below))
    result = {id(node): vertex_of[id(node)] if depth[id(node)] in kept_layers else elided for node in nodes}
    for node in nodes:
        result[id(node)].parents = []
    for node in nodes:
        vertex = result[id(node)]
        if vertex is not elided:
            for parent in node.parents:
                vertex.add_parent(result[id(parent)])
    return result


def _assign_layers(vertices: list[Vertex], consumers: dict[int, list[Vertex]]) -> dict[int, int]:
    layer: dict[int, int] = {}
    for vertex in vertices:  # topological: parents first
        layer[id(vertex)] = 1 + max((layer[id(p)] for p in vertex.parents), default=-1)
    for vertex in vertices:
        if not vertex.parents and consumers[id(vertex)]:
            layer[id(vertex)] = min(layer[id(c)] for c in consumers[id(vertex)]) - 1
    return layer


def _order_rows(rows: list[list[Vertex]], consumers: dict[int, list[Vertex]]) -> None:
    """Alternate upward (by inputs) and downward (by consumers) barycenter sweeps, in place."""
    def centre(row: list[Vertex]) -> dict[int, float]:
        return {id(n): i - (len(row) - 1) / 2 for i, n in enumerate(row)}

    for _ in range(SWEEPS):
        for neighbours, sequence in ((lambda n: list(n.parents), rows), (lambda n: consumers[id(n)], rows[::-1])):
            placed: dict[int, float] = {}
            for row in sequence:
                placed.update(centre(row))
                keyed = []
                for index, vertex in enumerate(row):
                    known = [placed[id(m)] for m in neighbours(vertex) if id(m) in placed]
                    keyed.append((sum(known) / len(known) if known else placed[id(vertex)], index, vertex))
                row[:] = [vertex for _, _, vertex in sorted(keyed, key=lambda item: (item[0], item[1]))]
                placed.update(centre(row))
