"""What a question's references read of a topology: kinds, containment, each node's ports and capacity.

As the graph is given (`Facts`, built once per topology) and after a program's changes (`After`, an
overlay, no copy).

A node's figures are those of ops.py: its ports are the EK_PORT nodes at or below it over RK_CONTAINS
(self-loops left out), its capacity their physical_capacity_bps summed, each node counted once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .. import ops
from .. import schema as s

if TYPE_CHECKING:
    import networkx as nx

#: (ports, switches, total capacity) at or below a node
Figures = tuple[int, int, int]


class Facts:
    """The topology as given: read-only, figures and extremes computed when first asked and kept."""

    def __init__(self, graph: nx.DiGraph, by_kind: dict[str, list[str]] | None = None) -> None:
        from ..topology import names_by_kind

        self.graph = graph
        self.by_kind = by_kind if by_kind is not None else names_by_kind(graph)
        self._figures: dict[str, Figures] = {}
        self._extremes: dict[tuple, list[str]] = {}
        self._parents: dict[str, list[str]] = {}
        self._children: dict[str, list[str]] = {}
        self._kinds: dict[str, Sequence[str]] = {}
        #: below and above per node, kept (None in an overlay, whose graph changes as it is built)
        self._reach: dict[tuple[str, bool], list[str]] | None = {}
        self._forms: dict[str, dict[str, list]] = {}  #: refs.Describer's choices per node, kept

    # ----- what every view answers ----------------------------------------------------------------

    def exists(self, node: str) -> bool:
        return node in self.graph

    def kinds(self, node: str) -> Sequence[str]:
        if node not in self._kinds:
            self._kinds[node] = self.graph.nodes[node].get("type") or ()
        return self._kinds[node]

    def children(self, node: str) -> list[str]:
        if node not in self._children:
            self._children[node] = ops.children(self.graph, node)
        return self._children[node]

    def parents(self, node: str) -> list[str]:
        if node not in self._parents:
            self._parents[node] = [p for p, data in self.graph.pred[node].items()
                                   if p != node and data.get("type") == ops.CONTAINS]
        return self._parents[node]

    def port_capacity(self, node: str) -> int:
        return self.graph.nodes[node].get(s.CAPACITY, 0)

    def of_kind(self, kind: str) -> list[str]:
        return self.by_kind.get(kind, [])

    def figures(self, node: str) -> Figures:
        if node not in self._figures:
            self._figures[node] = self._count(node)
        return self._figures[node]

    def extreme(self, kind: str, metric: str, most: bool, scope: str | None) -> list[str]:
        key = (kind, metric, most, scope)
        if key not in self._extremes:
            self._extremes[key] = self._extreme(kind, metric, most, scope)
        return self._extremes[key]

    # ----- derived, the same for both views ---------------------------------------------------------

    def has_kind(self, node: str, kind: str) -> bool:
        return kind in self.kinds(node)

    def kind_of(self, node: str) -> str:
        """The kind a question names a node by (a merged switch is a packet switch)."""
        kinds = self.kinds(node)
        return s.PACKET_SWITCH if s.PACKET_SWITCH in kinds else kinds[0]

    def below(self, node: str) -> list[str]:
        """Every node reachable over RK_CONTAINS from node (itself left out), each once."""
        return self._reached(node, True)

    def above(self, node: str) -> list[str]:
        """Every node node is reachable from over RK_CONTAINS, each once."""
        return self._reached(node, False)

    def _reached(self, node: str, down: bool) -> list[str]:
        if self._reach is not None and (node, down) in self._reach:
            return self._reach[node, down]
        step = self.children if down else self.parents
        seen, order, stack = {node}, [], [node]
        while stack:
            for other in step(stack.pop()):
                if other not in seen:
                    seen.add(other)
                    order.append(other)
                    stack.append(other)
        if self._reach is not None:
            self._reach[node, down] = order
        return order

    def metric(self, node: str, metric: str) -> int:
        ports, _, capacity = self.figures(node)
        if metric == "ports":
            return ports
        return capacity

    def _count(self, node: str) -> Figures:
        ports = switches = capacity = 0
        for n in (node, *self.below(node)):
            kinds = self.kinds(n)
            if s.PORT in kinds:
                ports += 1
                capacity += self.port_capacity(n)
            if s.PACKET_SWITCH in kinds:
                switches += 1
        return ports, switches, capacity

    def candidates(self, kind: str, scope: str | None) -> list[str]:
        """The nodes of a kind within scope (below it), or anywhere when scope is None."""
        if scope is None:
            return list(self.of_kind(kind))
        return [n for n in self.below(scope) if self.has_kind(n, kind)]

    def _extreme(self, kind: str, metric: str, most: bool, scope: str | None) -> list[str]:
        nodes = self.candidates(kind, scope)
        if not nodes:
            return []
        values = {n: self.metric(n, metric) for n in nodes}
        best = max(values.values()) if most else min(values.values())
        return sorted(n for n, v in values.items() if v == best)


class After(Facts):
    """The topology as a program leaves it (ops.py's semantics), read through an overlay on `base`."""

    def __init__(self, base: Facts, program: Iterable[dict[str, Any]]) -> None:
        super().__init__(base.graph, base.by_kind)
        self.base = base
        self.added: dict[str, tuple[tuple[str, ...], int]] = {}
        self.added_children: dict[str, list[str]] = {}
        self.added_parents: dict[str, list[str]] = {}
        self.removed: set[str] = set()
        self.capacity: dict[str, int] = {}
        self.touched: set[str] = set()  #: nodes whose figures may differ from the base's
        self._reach = None
        for step in program:
            self._apply(step)

    def exists(self, node: str) -> bool:
        return node in self.added or (node in self.graph and node not in self.removed)

    def kinds(self, node: str) -> Sequence[str]:
        return self.added[node][0] if node in self.added else self.base.kinds(node)

    def children(self, node: str) -> list[str]:
        old = [] if node in self.added else [c for c in self.base.children(node) if c not in self.removed]
        return old + self.added_children.get(node, [])

    def parents(self, node: str) -> list[str]:
        old = [] if node in self.added else [p for p in self.base.parents(node) if p not in self.removed]
        return old + self.added_parents.get(node, [])

    def port_capacity(self, node: str) -> int:
        if node in self.capacity:
            return self.capacity[node]
        return self.added[node][1] if node in self.added else self.base.port_capacity(node)

    def of_kind(self, kind: str) -> list[str]:
        kept = [n for n in self.base.of_kind(kind) if n not in self.removed]
        return kept + [n for n, (kinds, _) in self.added.items() if kind in kinds]

    def figures(self, node: str) -> Figures:
        if node in self.touched or node in self.added:
            return super().figures(node)
        return self.base.figures(node)

    def extreme(self, kind: str, metric: str, most: bool, scope: str | None) -> list[str]:
        return self._extreme(kind, metric, most, scope)

    # ----- the changes ----------------------------------------------------------------------------

    def _touch(self, node: str) -> None:
        self.touched.update((node, *self.above(node)))
        self._figures.clear()

    def _add(self, node: str, kinds: tuple[str, ...], capacity: int, parent: str) -> None:
        self.added[node] = (kinds, capacity)
        self.added_children.setdefault(parent, []).append(node)
        self.added_parents.setdefault(node, []).append(parent)
        self._touch(node)

    def _apply(self, step: dict[str, Any]) -> None:
        op = step["op"]
        if op == "add_port":
            self._add(step["port"], (s.PORT,), step["capacity"], step["switch"])
        elif op == "add_switch":
            self._add(step["switch"], (s.PACKET_SWITCH,), 0, step["parent"])
            for port, capacity in step["ports"]:
                self._add(port, (s.PORT,), capacity, step["switch"])
        elif op == "remove":
            name = step["name"]
            self._touch(name)
            doomed = [name]
            if self.has_kind(name, s.PACKET_SWITCH):
                doomed += [c for c in self.children(name) if self.has_kind(c, s.PORT)]
            self.removed.update(doomed)
        elif op == "update":
            self.capacity[step["port"]] = step["capacity"]
            self._touch(step["port"])
        elif op == "for_update":
            for switch in self.children(step["parent"]):
                if self.has_kind(switch, s.PACKET_SWITCH):
                    self._apply({"op": "update", "port": f"{switch}.{step['suffix']}", "capacity": step["capacity"]})
        elif op == "if":
            branch = "then" if self.figures(step["switch"])[2] > step["above"] else "else"
            for inner in step[branch]:
                self._apply(inner)
        elif op not in ("list", "rank", "count"):
            raise ValueError(f"unknown operation {op!r}")
