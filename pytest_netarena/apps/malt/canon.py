"""Canonical graph form (nodes and edges keyed by name) from networkx or node-link JSON, and its diff.

Graphs are compared by exact node, edge and attribute sets keyed by node name: no isomorphism
search, O(nodes + edges). Attribute dicts are kept as they come (raw); values are normalised only
where a plain comparison fails. Normalisation: `type` may be a string or a list (order ignored), ints
and floats of equal value are equal, physical_capacity_bps matches within a relative 1e-9 (a number too
large for a float, NaN or an infinity matches nothing: `close`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .schema import CAPACITY

if TYPE_CHECKING:
    import networkx as nx

    from ...sandbox.graph_diff import GraphBase, GraphDiff

REL_TOL = 1e-9


class BadGraph(ValueError):
    """A returned graph is not node-link JSON of the expected shape."""


@dataclass(frozen=True)
class Canon:
    nodes: dict[Any, dict[str, Any]]
    edges: dict[tuple[Any, Any], dict[str, Any]]
    #: set for a graph told apart from the grader's copy of the topology (a GraphBase): that copy, and the
    #: nodes and edges that may differ from it (all others are equal to it); diff() then compares only those
    base: GraphBase | None = None
    touched_nodes: frozenset[Any] | set[Any] = frozenset()
    touched_edges: frozenset[tuple[Any, Any]] | set[tuple[Any, Any]] = frozenset()


def kinds_of(value: Any) -> tuple[str, ...]:
    """A `type` attribute as a sorted tuple of kinds (a string counts as one kind)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(sorted(map(str, value)))
    return ()


def from_networkx(graph: nx.Graph) -> Canon:
    """A view of the graph's attribute dicts (shared, not copied: do not change them)."""
    return Canon(dict(graph.nodes(data=True)), {(u, v): data for u, v, data in graph.edges(data=True)})


def from_node_link(data: Any) -> Canon:
    """Parse node-link JSON (networkx's node_link_data, edges under "edges" or "links").

    Takes over (changes) the decoded JSON it is given.
    """
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise BadGraph("updated_graph must be node-link JSON: an object with a 'nodes' list")
    edges_key = "edges" if "edges" in data else "links"
    edge_list = data.get(edges_key, [])
    if not isinstance(edge_list, list):
        raise BadGraph(f"updated_graph['{edges_key}'] must be a list")
    try:  # the fast path: dict comprehensions over well-formed JSON
        nodes: dict[Any, dict[str, Any]] = {item.pop("id"): item for item in data["nodes"]}
        edges = {(item.pop("source"), item.pop("target")): item for item in edge_list}
    except (AttributeError, KeyError, TypeError) as error:
        raise BadGraph(
            "updated_graph is not node-link JSON: every node must be an object with a string 'id' "
            f"and every edge one with 'source' and 'target' ({type(error).__name__}: {error})"
        ) from error
    if data.get("multigraph"):
        for item in edge_list:
            item.pop("key", None)
    for end in {end for edge in edges for end in edge} - nodes.keys():
        nodes[end] = {}  # networkx adds edge ends as nodes too
    return Canon(nodes, edges)


def from_diff(changes: GraphDiff) -> Canon:
    """A graph returned as changes to the topology, rebuilt on the grader's copy of it (what from_node_link
    makes of the node-link JSON it stands for, without building that JSON; built when an id is not hashable)."""
    try:
        nodes, edges, touched_nodes, touched_edges = changes.apply()
    except TypeError:
        return from_node_link(changes.node_link())
    return Canon(nodes, edges, changes.base, touched_nodes, touched_edges)


_ABSENT = object()


def relative(graph: Canon, base: GraphBase) -> Canon:
    """The graph, told apart from base: the nodes and edges where the two differ (present in one only, or unequal)."""
    nodes = {n for n, attrs in graph.nodes.items() if base.nodes.get(n, _ABSENT) != attrs}
    edges = {e for e, attrs in graph.edges.items() if base.edges.get(e, _ABSENT) != attrs}
    nodes.update(base.nodes.keys() - graph.nodes.keys())
    edges.update(base.edges.keys() - graph.edges.keys())
    return Canon(graph.nodes, graph.edges, base, nodes, edges)


def _only(graph: Canon, nodes: set[Any], edges: set[tuple[Any, Any]]) -> Canon:
    return Canon({n: graph.nodes[n] for n in nodes if n in graph.nodes},
                 {e: graph.edges[e] for e in edges if e in graph.edges})


def finite(x: Any) -> bool:
    """Whether x is a number that fits a float and is neither NaN nor infinite (10**400 is not)."""
    if not _number(x):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False


def close(a: Any, b: Any) -> bool:
    """Whether two numbers are equal within REL_TOL; a number that is not finite() equals nothing."""
    return finite(a) and finite(b) and math.isclose(a, b, rel_tol=REL_TOL)


def shown(value: Any, limit: int = 80) -> str:
    """repr(value), cut to limit characters (an answer's value can be thousands of digits long)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 20]}...({len(text):,} characters)"


def same_value(key: str, a: Any, b: Any) -> bool:
    """Equal as the grader means it; exact == elsewhere, so a huge, NaN or infinite number only equals itself
    where == says so (never NaN, and no expected value is infinite)."""
    if key == "type":
        return kinds_of(a) == kinds_of(b) and bool(kinds_of(a)) == bool(a)
    if key == CAPACITY and _number(a) and _number(b):
        return close(a, b)
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
            out.append(f"unexpected {key}={shown(actual[key])}")
        elif not same_value(key, expected[key], actual[key]):
            out.append(f"{key}={shown(actual[key])}, expected {shown(expected[key])}")
    return out


def _changed(expected: dict[Any, dict[str, Any]], actual: dict[Any, dict[str, Any]], label: Any) -> list[str]:
    """Items present on both sides whose attributes differ after normalisation."""
    get = actual.get
    suspects = [key for key, attrs in expected.items() if get(key) != attrs]
    changed = []
    for key in suspects:
        if key not in actual:
            continue
        detail = _attr_diff(expected[key], actual[key])
        if detail:
            changed.append(f"{label(key)} ({'; '.join(detail)})")
    return changed


def diff(expected: Canon, actual: Canon, limit: int = 6) -> list[str]:
    """Readable differences (at most `limit` of each sort); empty when the graphs are equal. Two graphs told
    apart from the same base are compared where either differs from it (elsewhere both equal it)."""
    if expected.base is not None and expected.base is actual.base:
        nodes = {*expected.touched_nodes, *actual.touched_nodes}
        edges = {*expected.touched_edges, *actual.touched_edges}
        expected, actual = _only(expected, nodes, edges), _only(actual, nodes, edges)
    if expected.nodes == actual.nodes and expected.edges == actual.edges:
        return []  # the common case, decided at C speed
    problems: list[str] = []

    def report(what: str, items: list[Any]) -> None:
        if items:
            shown = ", ".join(map(str, sorted(items, key=str)[:limit]))
            more = f" and {len(items) - limit} more" if len(items) > limit else ""
            problems.append(f"{what}: {shown}{more}")

    report("missing nodes", list(expected.nodes.keys() - actual.nodes.keys()))
    report("unexpected nodes", list(actual.nodes.keys() - expected.nodes.keys()))
    report("changed node attributes", _changed(expected.nodes, actual.nodes, str))
    report("missing edges", [f"{u}->{v}" for u, v in expected.edges.keys() - actual.edges.keys()])
    report("unexpected edges", [f"{u}->{v}" for u, v in actual.edges.keys() - expected.edges.keys()])
    report("changed edge attributes", _changed(expected.edges, actual.edges, lambda e: f"{e[0]}->{e[1]}"))
    return problems
