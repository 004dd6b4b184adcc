"""Datacenter constraints a returned graph must satisfy, reported as readable violation strings.

Checks (all of them, not only the first failure): node kinds valid and non-empty, mandatory
attributes (`name` equal to the node id, `type`, a port's `physical_capacity_bps`), edge kinds
valid, the containment table of schema.MAY_CONTAIN (an edge is valid if any kind of its source may
contain any kind of its target), RK_CONTROLS from a control point to a packet switch, no isolated
node (self-loops do not count), every packet switch contains a port, every port is contained in a
packet switch, and capacities are finite numbers > 0 (that fit a float: 10**400 does not).
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

from . import schema as s
from .canon import Canon, finite
from .canon import shown as cut
from ...sandbox.graph_diff import hashable

MAX_LISTED = 5


def check(graph: Canon) -> list[str]:
    """The graph's violations. A graph told apart from a base (the grader's copy of the topology) that has none
    is checked only where a violation can be: its changed nodes and edges and their neighbours, in graph order,
    which gives the same list as checking it all."""
    found: dict[str, list[str]] = defaultdict(list)  # what is wrong -> where, in the order first found
    near = _near_changes(graph) if graph.base is not None and _clean(graph.base) else None
    if near is None:
        kinds_of = _check_nodes(graph.nodes.items(), found)
        linked, has_port, in_switch = _check_edges(graph.edges, lambda node: kinds_of.get(node, _NONE), found)
        settled = kinds_of.items()
    else:
        nodes, edges, affected, changed_at = near
        kinds_of = _check_nodes(((node, graph.nodes[node]) for node in nodes), found)
        kinds = _kinds_with(graph, kinds_of)
        _check_edges({edge: graph.edges[edge] for edge in edges}, kinds, found)
        incident = {edge: graph.edges[edge] for node in affected for edge in _incident(graph, node, changed_at)}
        linked, has_port, in_switch = _check_edges(incident, kinds, defaultdict(list))
        settled = ((node, kinds(node)) for node in affected)
    for node, node_kinds in settled:
        if node not in linked:
            found["isolated nodes"].append(node)
        if _SWITCH in node_kinds and node not in has_port:
            found["packet switches without a port"].append(node)
        if _PORT in node_kinds and node not in in_switch:
            found["ports not contained in a packet switch"].append(node)
    violations = []
    for what, items in found.items():
        shown = ", ".join(map(str, sorted(items, key=str)[:MAX_LISTED]))
        more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
        violations.append(f"{len(items)} {what}: {shown}{more}")
    return violations


_CLEAN: WeakKeyDictionary[Any, bool] = WeakKeyDictionary()


def _clean(base: Any) -> bool:
    """Whether the base graph (a GraphBase) has no violation (checked once per base)."""
    if base not in _CLEAN:
        _CLEAN[base] = not check(Canon(base.nodes, base.edges))
    return _CLEAN[base]


def _incident(graph: Canon, node: Any, changed_at: dict[Any, list[tuple[Any, Any]]]) -> list[tuple[Any, Any]]:
    """The graph's edges at node: the base's there and the changed ones (changed_at), those the graph has."""
    base = graph.base
    edges = [key for key, _ in base.out.get(node, ())] + [(u, node) for u in base.into.get(node, ())]
    return [edge for edge in dict.fromkeys(edges + changed_at.get(node, [])) if edge in graph.edges]


def _near_changes(graph: Canon) -> tuple[list[Any], list[tuple[Any, Any]], list[Any], dict[Any, list[tuple[Any, Any]]]]:
    """(changed nodes, edges to check: changed ones and those at changed nodes, nodes whose links may have
    changed: changed nodes, the ends of changed edges and their neighbours), each in graph order; and the
    changed edges at each node."""
    changed_at: dict[Any, list[tuple[Any, Any]]] = defaultdict(list)
    for edge in graph.touched_edges:
        changed_at[edge[0]].append(edge)
        changed_at[edge[1]].append(edge)
    changed = {node for node in graph.touched_nodes if node in graph.nodes}
    at_changed = {edge for node in changed for edge in _incident(graph, node, changed_at)}
    edges = {edge for edge in graph.touched_edges if edge in graph.edges} | at_changed
    affected = changed | changed_at.keys() | {end for edge in at_changed for end in edge}
    return ([node for node in graph.nodes if node in changed], [edge for edge in graph.edges if edge in edges],
            [node for node in graph.nodes if node in affected], changed_at)


def _kinds_with(graph: Canon, kinds_of: dict[object, frozenset[str]]) -> Any:
    """A node's valid kinds: those the node check found, else read off its attributes (an unchanged node of a
    base without violations: nothing to report)."""
    def kinds(node: Any) -> frozenset[str]:
        if node not in kinds_of:
            kinds_of[node] = _valid_kinds(graph.nodes[node].get("type"), node, defaultdict(list))
        return kinds_of[node]
    return kinds


def _check_nodes(nodes: Any, found: dict[str, list[str]]) -> dict[object, frozenset[str]]:
    """Each node's valid kinds; its type, name and (a port's) capacity checked on the way."""
    kinds_cache: dict[Any, frozenset[str]] = {}
    kinds_of: dict[object, frozenset[str]] = {}
    for node, attrs in nodes:
        raw = attrs.get("type")
        key = tuple(raw) if isinstance(raw, list) else raw
        try:
            kinds = kinds_cache[key]
        except (KeyError, TypeError):
            kinds = _valid_kinds(raw, node, found)
            if (hashable(key) and kinds) or not raw:
                kinds_cache[key] = kinds
        if not raw:
            found["nodes without a type"].append(node)
        kinds_of[node] = kinds
        if attrs.get("name") != node:
            found["nodes whose name attribute differs from their id"].append(node)
        if _PORT in kinds:
            _check_capacity(node, attrs.get(s.CAPACITY), found)
    return kinds_of


def _check_capacity(node: object, capacity: Any, found: dict[str, list[str]]) -> None:
    if type(capacity) not in (int, float):
        found[f"ports without a numeric {s.CAPACITY}"].append(node)
    elif not finite(capacity) or capacity <= 0:
        found[f"ports with {s.CAPACITY} <= 0 or not finite"].append(f"{node} ({cut(capacity)})")


def _check_edges(edges: dict[tuple[Any, Any], dict[str, Any]], kinds: Any,
                 found: dict[str, list[str]]) -> tuple[set[object], set[object], set[object]]:
    """Edge kinds and what each may join (kinds(node): its valid kinds); returns (nodes with an edge, switches
    holding a port, ports in a switch)."""
    linked: set[object] = set()
    has_port: set[object] = set()
    in_switch: set[object] = set()
    for (u, v), attrs in edges.items():
        kind = attrs.get("type")
        if isinstance(kind, list) and len(kind) == 1:
            kind = kind[0]
        a, z = kinds(u), kinds(v)
        if u != v:
            linked.add(u)
            linked.add(v)
        if kind == s.CONTAINS:
            if not _allowed(a, z, s.MAY_CONTAIN):
                found["containment edges the hierarchy forbids"].append(f"{u} {sorted(a)} -> {v} {sorted(z)}")
            elif u != v and _PORT in z and _SWITCH in a:
                has_port.add(u)
                in_switch.add(v)
        elif kind == s.CONTROLS:
            if not _allowed(a, z, s.MAY_CONTROL):
                found["RK_CONTROLS edges not from a control point to a packet switch"].append(f"{u}->{v}")
        else:
            found["edges with an unknown type"].append(f"{u}->{v} {kind!r}")
    return linked, has_port, in_switch


_PORT, _SWITCH = s.PORT, s.PACKET_SWITCH
_NONE: frozenset[str] = frozenset()
_KINDS = frozenset(s.ENTITY_KINDS)


def _valid_kinds(raw: Any, node: object, found: dict[str, list[str]]) -> frozenset[str]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, (list, tuple)):
        if raw is not None:
            found["nodes with an unknown type"].append(f"{node} {raw!r}")
        return frozenset()
    kinds = frozenset(k for k in raw if isinstance(k, str))
    if not kinds <= _KINDS or len(kinds) != len(raw):
        found["nodes with an unknown type"].append(f"{node} {raw!r}")
    return kinds & _KINDS


@lru_cache(maxsize=1024)
def _allowed_cached(a: frozenset[str], z: frozenset[str], table_id: int) -> bool:
    table = s.MAY_CONTAIN if table_id == 0 else s.MAY_CONTROL
    return any(child in table.get(parent, ()) for parent in a for child in z)


def _allowed(a: frozenset[str], z: frozenset[str], table: dict[str, frozenset[str]]) -> bool:
    return _allowed_cached(a, z, 0 if table is s.MAY_CONTAIN else 1)
