"""Graphs a boxed answer returns as changes to the input graph: checked, bounded as their whole JSON would be, rebuilt.

The zygote sends a networkx DiGraph the answer returned as its changes against the graph the box
was given (zygote.graph_diff). The grader reads them against its own copy of that graph, decoded
from the bytes it sent (GraphBase), never against anything the answer's process held. A diff names
only nodes of that graph where it removes or rewires one, and edges between nodes of the graph it
stands for; anything else is refused. Its size, item count and depth are those of the node-link JSON
it stands for, so the decoder's bounds give the verdict the whole graph's JSON would have got.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .plain_json import Undecodable

#: the key that marks a graph sent as changes (zygote.DIFF)
MARKER = "graph_diff"
KEYS = frozenset((MARKER, "graph", "removed", "out", "nodes", "edges"))
#: node-link JSON of a DiGraph without its graph attributes, nodes and edges
_SKELETON = json.dumps({"directed": True, "multigraph": False, "graph": None, "nodes": [], "edges": []})


def items(text: str) -> int:
    """What plain_json counts as items: commas and opening brackets."""
    return text.count(",") + text.count("[") + text.count("{")


def depth(value: Any) -> int:
    """How deep JSON brackets nest in value (a scalar 0, [] 1)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def hashable(value: Any) -> bool:
    """Whether a value from untrusted JSON can be a dict key or set member (a list cannot)."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


class GraphBase:
    """The input graph as node-link JSON decodes (the grader's copy), with the size of each entry."""

    def __init__(self, graph_json: bytes) -> None:
        data = json.loads(graph_json)
        self.order: list[Any] = []
        self.nodes: dict[Any, dict[str, Any]] = {}
        self.node_size: dict[Any, tuple[int, int, int]] = {}  #: bytes, items, depth of the node's entry
        for entry in data["nodes"]:
            text, level = json.dumps(entry), depth(entry)
            node = entry.pop("id")
            self.order.append(node)
            self.nodes[node] = entry
            self.node_size[node] = (len(text), items(text), level)
        self.out: dict[Any, list[tuple[tuple[Any, Any], dict[str, Any]]]] = {node: [] for node in self.order}
        self.into: dict[Any, list[Any]] = {node: [] for node in self.order}
        self.out_size: dict[Any, list[int]] = {node: [0, 0] for node in self.order}  #: bytes, items of its out-edges
        self.out_depths: dict[Any, Counter[int]] = {node: Counter() for node in self.order}
        self.edges: dict[tuple[Any, Any], dict[str, Any]] = {}
        for entry in data["edges"]:
            text, level = json.dumps(entry), depth(entry)
            u, v = entry.pop("source"), entry.pop("target")
            self.out[u].append(((u, v), entry))
            self.into[v].append(u)
            self.edges[u, v] = entry
            size = self.out_size[u]
            size[0] += len(text)
            size[1] += items(text)
            self.out_depths[u][level] += 1
        self.depths: Counter[int] = Counter(size[2] for size in self.node_size.values())
        for counts in self.out_depths.values():
            self.depths.update(counts)
        self.node_bytes = sum(size[0] for size in self.node_size.values())
        self.node_items = sum(size[1] for size in self.node_size.values())
        self.edge_bytes = sum(size[0] for size in self.out_size.values())
        self.edge_items = sum(size[1] for size in self.out_size.values())


@dataclass
class GraphDiff:
    """One returned graph as changes to `base` (read(): checked); `size`, `items`: those of the node-link
    JSON it stands for, `kept_depth`: the deepest entry of the base it keeps (0: none)."""

    base: GraphBase
    graph: Any
    removed: list[Any]
    out: list[Any]
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    size: int = 0
    items: int = 0
    kept_depth: int = 0
    replaced: set[Any] = field(default_factory=set)

    def apply(self) -> tuple[dict[Any, Any], dict[tuple[Any, Any], Any], set[Any], set[tuple[Any, Any]]]:
        """(nodes, edges, touched nodes, touched edges) of the graph, as node-link JSON of it decodes into
        id -> attributes and (source, target) -> attributes, in its order; untouched attribute dicts are the
        base's own (read them only). TypeError when a node id is not hashable (node_link() then)."""
        base = self.base
        nodes = base.nodes.copy()
        for node in self.removed:
            del nodes[node]
        if not all(hashable(entry["id"]) for entry in self.nodes):
            raise TypeError("a node id is not hashable")
        for entry in self.nodes:
            attrs = dict(entry)
            nodes[attrs.pop("id")] = attrs
        groups: dict[Any, list[tuple[tuple[Any, Any], dict[str, Any]]]] = {node: [] for node in self.out}
        for entry in self.edges:
            attrs = dict(entry)
            u, v = attrs.pop("source"), attrs.pop("target")
            groups.setdefault(u, []).append(((u, v), attrs))
        new = {entry["id"] for entry in self.nodes} - self.replaced
        edges: dict[tuple[Any, Any], Any] = {}
        if not (self.removed or self.out or new or self.edges):
            edges.update(base.edges)
        else:
            for node in nodes:
                edges.update(groups.get(node, ()) if node in groups or node in new else base.out[node])
        touched_edges = {key for node in (*self.out, *self.removed) for key, _ in base.out[node]}
        touched_edges.update((u, node) for node in self.removed for u in base.into[node])
        touched_edges.update(key for group in groups.values() for key, _ in group)
        return nodes, edges, {*self.removed, *(entry["id"] for entry in self.nodes)}, touched_edges

    def node_link(self) -> dict[str, Any]:
        """The node-link JSON the diff stands for, as the grader would have decoded it (fresh objects)."""
        base, gone = self.base, set(self.removed)
        given = {entry["id"]: entry for entry in self.nodes if hashable(entry["id"]) and entry["id"] in self.replaced}
        nodes = [given.get(node) or {**base.nodes[node], "id": node} for node in base.order if node not in gone]
        nodes += [entry for entry in self.nodes if not (hashable(entry["id"]) and entry["id"] in self.replaced)]
        groups: dict[Any, list[dict[str, Any]]] = {}
        for edge in self.edges:
            groups.setdefault(edge["source"], []).append(edge)
        edges: list[dict[str, Any]] = []
        rewired = set(self.out)
        for entry in nodes:
            node = entry["id"]
            if not hashable(node):
                continue
            if node in base.nodes and node not in gone and node not in rewired and node not in groups:
                edges += [{**attrs, "source": u, "target": v} for (u, v), attrs in base.out[node]]
            else:
                edges += groups.pop(node, [])
        data = {"directed": True, "multigraph": False, "graph": self.graph, "nodes": nodes, "edges": edges}
        return json.loads(json.dumps(data))


def _malformed(why: str) -> Undecodable:
    return Undecodable(f"the returned graph's changes are malformed: {why}")


def _base_ids(values: Any, base: GraphBase, what: str) -> list[Any]:
    if not isinstance(values, list):
        raise _malformed(f"{what} is not a list")
    if not all(hashable(node) and node in base.nodes for node in values):
        raise _malformed(f"{what} names a node the input graph does not have")
    if len(set(values)) != len(values):
        raise _malformed(f"{what} names a node twice")
    return values


def read(marker: dict[str, Any], base: GraphBase) -> GraphDiff:
    """The diff a marker holds, checked against base, with the size of the JSON it stands for (Undecodable if
    malformed)."""
    if set(marker) != KEYS or marker[MARKER] != 1:
        raise _malformed("unexpected keys")
    removed = _base_ids(marker["removed"], base, "removed")
    out = _base_ids(marker["out"], base, "out")
    entries, edges = marker["nodes"], marker["edges"]
    if not (isinstance(entries, list) and isinstance(edges, list)):
        raise _malformed("nodes or edges is not a list")
    gone = set(removed)
    if gone & set(out):
        raise _malformed("a removed node's edges are given")
    replaced, new, hashable = _node_ids(entries, base, gone)
    rewired = set(out) | new
    if any(u not in gone and u not in rewired for node in gone - new for u in base.into[node]):
        raise _malformed("an input node keeps an edge to a removed node")
    if hashable:  # every id hashable (else the graph is refused as node-link JSON would be): check the edges
        _check_edges(edges, base, gone, rewired, new)
    diff = GraphDiff(base, marker["graph"], removed, out, entries, edges, replaced=replaced)
    _measure(diff)
    return diff


def _node_ids(entries: list[Any], base: GraphBase, gone: set[Any]) -> tuple[set[Any], set[Any], bool]:
    """(ids replacing an input node's entry, new ids, whether every id is hashable)."""
    if not all(isinstance(entry, dict) and "id" in entry for entry in entries):
        raise _malformed("a node entry is not an object with an id")
    ids = [entry["id"] for entry in entries if hashable(entry["id"])]
    replaced = {node for node in ids if node in base.nodes and node not in gone}
    if len(replaced) != sum(1 for node in ids if node in replaced):
        raise _malformed("a node is given twice")
    return replaced, set(ids) - replaced, len(ids) == len(entries)


def _check_edges(edges: list[Any], base: GraphBase, gone: set[Any], rewired: set[Any], new: set[Any]) -> None:
    """Every edge is an object from a node whose out-edges are given to a node of the graph."""
    def present(node: Any) -> bool:
        return hashable(node) and (node in new or (node in base.nodes and node not in gone))

    for edge in edges:
        if not (isinstance(edge, dict) and "source" in edge and "target" in edge):
            raise _malformed("an edge is not an object with a source and a target")
        if not (hashable(edge["source"]) and edge["source"] in rewired and present(edge["target"])):
            raise _malformed("an edge names a node that is not in the graph, or a source whose edges are kept")


def _measure(diff: GraphDiff) -> None:
    """The size, items and kept depth of the node-link JSON the diff stands for."""
    base = diff.base
    node_texts = [json.dumps(entry) for entry in diff.nodes]
    edge_texts = [json.dumps(entry) for entry in diff.edges]
    dropped = [*diff.removed, *diff.replaced]
    rewired = [*diff.removed, *diff.out]
    node_count = len(base.order) - len(diff.removed) + len(diff.nodes) - len(diff.replaced)
    edge_count = len(base.edges) - sum(len(base.out[node]) for node in rewired) + len(diff.edges)
    graph_text = json.dumps(diff.graph)
    diff.size = (len(_SKELETON) - len("null") + len(graph_text)
                 + base.node_bytes - sum(base.node_size[node][0] for node in dropped) + sum(map(len, node_texts))
                 + base.edge_bytes - sum(base.out_size[node][0] for node in rewired) + sum(map(len, edge_texts))
                 + 2 * max(node_count - 1, 0) + 2 * max(edge_count - 1, 0))
    diff.items = (items(_SKELETON) + items(graph_text)
                  + base.node_items - sum(base.node_size[node][1] for node in dropped) + sum(map(items, node_texts))
                  + base.edge_items - sum(base.out_size[node][1] for node in rewired) + sum(map(items, edge_texts))
                  + max(node_count - 1, 0) + max(edge_count - 1, 0))
    kept = base.depths.copy()
    kept.subtract(base.node_size[node][2] for node in dropped)
    for node in rewired:
        kept.subtract(base.out_depths[node])
    diff.kept_depth = max((level for level, count in kept.items() if count > 0), default=0)
