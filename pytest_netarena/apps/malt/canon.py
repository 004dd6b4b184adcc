"""Canonical graph form (nodes and edges keyed by name) from networkx or node-link JSON, and its diff.

Graphs are compared by exact node, edge and attribute sets keyed by node name: no isomorphism
search, O(nodes + edges). Normalisation: `type` may be a string or a list (order ignored), ints
and floats of equal value are equal, physical_capacity_bps matches within a relative 1e-9.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .schema import CAPACITY

if TYPE_CHECKING:
    import networkx as nx

REL_TOL = 1e-9


class BadGraph(ValueError):
    """A returned graph is not node-link JSON of the expected shape."""


@dataclass(frozen=True)
class Canon:
    nodes: dict[Any, dict[str, Any]]
    edges: dict[tuple[Any, Any], dict[str, Any]]


def _norm(attrs: dict[str, Any]) -> dict[str, Any]:
    kinds = attrs.get("type")
    if kinds is None:
        return attrs
    out = dict(attrs)
    if isinstance(kinds, str):
        out["type"] = (kinds,)
    elif isinstance(kinds, (list, tuple)):
        out["type"] = tuple(sorted(map(str, kinds)))
    return out


def from_networkx(graph: nx.Graph) -> Canon:
    return Canon(
        {node: _norm(data) for node, data in graph.nodes(data=True)},
        {(u, v): _norm(data) for u, v, data in graph.edges(data=True)},
    )


def _key(value: Any) -> Any:
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) else repr(value)


def from_node_link(data: Any) -> Canon:
    """Parse node-link JSON (networkx's node_link_data, edges under "edges" or "links")."""
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise BadGraph("updated_graph must be node-link JSON: an object with a 'nodes' list")
    edges_key = "edges" if "edges" in data else "links"
    edge_list = data.get(edges_key, [])
    if not isinstance(edge_list, list):
        raise BadGraph(f"updated_graph['{edges_key}'] must be a list")
    nodes: dict[Any, dict[str, Any]] = {}
    for item in data["nodes"]:
        if not isinstance(item, dict) or "id" not in item:
            raise BadGraph("every node of updated_graph must be an object with an 'id'")
        attrs = dict(item)
        node = _key(attrs.pop("id"))
        nodes[node] = _norm(attrs)
    edges: dict[tuple[Any, Any], dict[str, Any]] = {}
    for item in edge_list:
        if not isinstance(item, dict) or "source" not in item or "target" not in item:
            raise BadGraph("every edge of updated_graph must be an object with 'source' and 'target'")
        attrs = dict(item)
        u, v = _key(attrs.pop("source")), _key(attrs.pop("target"))
        attrs.pop("key", None)
        edges[(u, v)] = _norm(attrs)
        for end in (u, v):
            nodes.setdefault(end, {})  # networkx adds edge ends as nodes too
    return Canon(nodes, edges)


def same_value(key: str, a: Any, b: Any) -> bool:
    if key == CAPACITY and _number(a) and _number(b):
        return math.isclose(a, b, rel_tol=REL_TOL)
    if _number(a) and _number(b):
        return a == b
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _attr_diff(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(expected) | set(actual), key=str):
        if key not in actual:
            out.append(f"missing {key}")
        elif key not in expected:
            out.append(f"unexpected {key}={actual[key]!r}")
        elif not same_value(key, expected[key], actual[key]):
            out.append(f"{key}={actual[key]!r}, expected {expected[key]!r}")
    return out


def diff(expected: Canon, actual: Canon, limit: int = 6) -> list[str]:
    """Readable differences (at most `limit` of each sort); empty when the graphs are equal."""
    problems: list[str] = []

    def report(what: str, items: list[Any]) -> None:
        if items:
            shown = ", ".join(map(str, sorted(items, key=str)[:limit]))
            more = f" and {len(items) - limit} more" if len(items) > limit else ""
            problems.append(f"{what}: {shown}{more}")

    report("missing nodes", [n for n in expected.nodes if n not in actual.nodes])
    report("unexpected nodes", [n for n in actual.nodes if n not in expected.nodes])
    changed = []
    for node, attrs in expected.nodes.items():
        other = actual.nodes.get(node)
        if other is not None and other != attrs:
            detail = _attr_diff(attrs, other)
            if detail:
                changed.append(f"{node} ({'; '.join(detail)})")
    report("changed node attributes", changed)
    report("missing edges", [f"{u}->{v}" for u, v in expected.edges if (u, v) not in actual.edges])
    report("unexpected edges", [f"{u}->{v}" for u, v in actual.edges if (u, v) not in expected.edges])
    changed = []
    for edge, attrs in expected.edges.items():
        other = actual.edges.get(edge)
        if other is not None and other != attrs:
            detail = _attr_diff(attrs, other)
            if detail:
                changed.append(f"{edge[0]}->{edge[1]} ({'; '.join(detail)})")
    report("changed edge attributes", changed)
    return problems
