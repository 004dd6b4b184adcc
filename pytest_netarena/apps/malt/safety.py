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

from . import schema as s
from .canon import Canon, finite
from .canon import shown as cut

MAX_LISTED = 5


def check(graph: Canon) -> list[str]:
    found: dict[str, list[str]] = defaultdict(list)  # what is wrong -> where, in the order first found
    kinds_of = _check_nodes(graph, found)
    linked, has_port, in_switch = _check_edges(graph, kinds_of, found)
    for node, kinds in kinds_of.items():
        if node not in linked:
            found["isolated nodes"].append(node)
        if _SWITCH in kinds and node not in has_port:
            found["packet switches without a port"].append(node)
        if _PORT in kinds and node not in in_switch:
            found["ports not contained in a packet switch"].append(node)
    violations = []
    for what, items in found.items():
        shown = ", ".join(map(str, sorted(items, key=str)[:MAX_LISTED]))
        more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
        violations.append(f"{len(items)} {what}: {shown}{more}")
    return violations


def _check_nodes(graph: Canon, found: dict[str, list[str]]) -> dict[object, frozenset[str]]:
    """Each node's valid kinds; its type, name and (a port's) capacity checked on the way."""
    kinds_cache: dict[Any, frozenset[str]] = {}
    kinds_of: dict[object, frozenset[str]] = {}
    for node, attrs in graph.nodes.items():
        raw = attrs.get("type")
        key = tuple(raw) if isinstance(raw, list) else raw
        try:
            kinds = kinds_cache[key]
        except (KeyError, TypeError):
            kinds = _valid_kinds(raw, node, found)
            if _hashable(key) and kinds or not raw:
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


def _check_edges(graph: Canon, kinds_of: dict[object, frozenset[str]],
                 found: dict[str, list[str]]) -> tuple[set[object], set[object], set[object]]:
    """Edge kinds and what each may join; returns (nodes with an edge, switches holding a port, ports in a switch)."""
    linked: set[object] = set()
    has_port: set[object] = set()
    in_switch: set[object] = set()
    empty: frozenset[str] = frozenset()
    for (u, v), attrs in graph.edges.items():
        kind = attrs.get("type")
        if isinstance(kind, list) and len(kind) == 1:
            kind = kind[0]
        a, z = kinds_of.get(u, empty), kinds_of.get(v, empty)
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
_KINDS = frozenset(s.ENTITY_KINDS)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


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
