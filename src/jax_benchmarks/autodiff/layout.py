"""A layered layout of a computational graph (no graphviz): leaves at the bottom, the output on top.

Operators sit one layer above their highest input (longest path from the
leaves); a leaf sits just below its first consumer, so a constant is drawn
next to the operator that uses it. Within a layer, nodes are ordered by the
mean position of their neighbours (the barycenter heuristic) to cut crossings.
"""

from __future__ import annotations

from dataclasses import dataclass

from jax_benchmarks.autodiff.graph import Node, graph_nodes

SWEEPS = 4


@dataclass(frozen=True)
class Layout:
    nodes: tuple[Node, ...]
    edges: tuple[tuple[Node, Node], ...]  # (input, consumer)
    positions: dict[int, tuple[float, float]]  # id(node) -> (x, layer)

    def position(self, node: Node) -> tuple[float, float]:
        return self.positions[id(node)]

    @property
    def layer_count(self) -> int:
        return 1 + int(max(y for _, y in self.positions.values()))

    @property
    def max_width(self) -> int:
        counts: dict[float, int] = {}
        for _, y in self.positions.values():
            counts[y] = counts.get(y, 0) + 1
        return max(counts.values())


def layered_layout(root: Node) -> Layout:
    nodes = graph_nodes(root)
    consumers: dict[int, list[Node]] = {id(n): [] for n in nodes}
    for node in nodes:
        for parent in node.parents:
            consumers[id(parent)].append(node)
    layer = _assign_layers(nodes, consumers)
    rows = [[n for n in nodes if layer[id(n)] == i] for i in range(max(layer.values()) + 1)]
    _order_rows(rows, consumers)
    positions = {
        id(node): (index - (len(row) - 1) / 2, float(i)) for i, row in enumerate(rows) for index, node in enumerate(row)
    }
    edges = tuple((parent, node) for node in nodes for parent in node.parents)
    return Layout(tuple(nodes), edges, positions)


def _assign_layers(nodes: list[Node], consumers: dict[int, list[Node]]) -> dict[int, int]:
    layer: dict[int, int] = {}
    for node in nodes:  # topological: parents first
        layer[id(node)] = 1 + max((layer[id(p)] for p in node.parents), default=-1)
    for node in nodes:
        if not node.parents and consumers[id(node)]:
            layer[id(node)] = min(layer[id(c)] for c in consumers[id(node)]) - 1
    return layer


def _order_rows(rows: list[list[Node]], consumers: dict[int, list[Node]]) -> None:
    """Alternate upward (by inputs) and downward (by consumers) barycenter sweeps, in place."""
    def centre(row: list[Node]) -> dict[int, float]:
        return {id(n): i - (len(row) - 1) / 2 for i, n in enumerate(row)}

    for _ in range(SWEEPS):
        for neighbours, sequence in ((lambda n: list(n.parents), rows), (lambda n: consumers[id(n)], rows[::-1])):
            placed: dict[int, float] = {}
            for row in sequence:
                placed.update(centre(row))
                keyed = []
                for index, node in enumerate(row):
                    known = [placed[id(m)] for m in neighbours(node) if id(m) in placed]
                    keyed.append((sum(known) / len(known) if known else placed[id(node)], index, node))
                row[:] = [node for _, _, node in sorted(keyed, key=lambda item: (item[0], item[1]))]
                placed.update(centre(row))
