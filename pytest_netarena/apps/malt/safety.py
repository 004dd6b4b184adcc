"""Datacenter constraints a returned graph must satisfy, reported as readable violation strings.

Checks (all of them, not only the first failure): node kinds valid and non-empty, mandatory
attributes (`name` equal to the node id, `type`, a port's `physical_capacity_bps`), edge kinds
valid, the containment table of schema.MAY_CONTAIN (an edge is valid if any kind of its source may
contain any kind of its target), RK_CONTROLS from a control point to a packet switch, no isolated
node (self-loops do not count), every packet switch contains a port, every port is contained in a
packet switch, and capacities are finite numbers > 0.
"""

from __future__ import annotations

import math
from collections import defaultdict

from . import schema as s
from .canon import Canon

MAX_LISTED = 5


def check(graph: Canon) -> list[str]:
    kinds_ok = set(s.ENTITY_KINDS)
    found: dict[str, list[str]] = defaultdict(list)
    linked: set[object] = set()
    contains_out: dict[object, list[object]] = defaultdict(list)
    contains_in: dict[object, list[object]] = defaultdict(list)
    kinds_of = {}
    for node, attrs in graph.nodes.items():
        kinds = attrs.get("type")
        if not kinds:
            found["nodes without a type"].append(node)
            kinds = ()
        elif not isinstance(kinds, tuple) or not set(kinds) <= kinds_ok:
            found["nodes with an unknown type"].append(f"{node} {attrs.get('type')!r}")
            kinds = tuple(k for k in kinds if k in kinds_ok) if isinstance(kinds, tuple) else ()
        kinds_of[node] = kinds
        if attrs.get("name") != node:
            found["nodes whose name attribute differs from their id"].append(node)
        if s.PORT in kinds:
            capacity = attrs.get(s.CAPACITY)
            if not isinstance(capacity, (int, float)) or isinstance(capacity, bool):
                found[f"ports without a numeric {s.CAPACITY}"].append(node)
            elif not math.isfinite(capacity) or capacity <= 0:
                found[f"ports with {s.CAPACITY} <= 0 or not finite"].append(f"{node} ({capacity!r})")
    for (u, v), attrs in graph.edges.items():
        kind = attrs.get("type")
        if isinstance(kind, tuple) and len(kind) == 1:
            kind = kind[0]
        if u != v:
            linked.add(u)
            linked.add(v)
        a, z = kinds_of.get(u, ()), kinds_of.get(v, ())
        if kind == s.CONTAINS:
            if u != v:
                contains_out[u].append(v)
                contains_in[v].append(u)
            if not any(child in s.MAY_CONTAIN.get(parent, ()) for parent in a for child in z):
                found["containment edges the hierarchy forbids"].append(f"{u} {list(a)} -> {v} {list(z)}")
        elif kind == s.CONTROLS:
            if not any(child in s.MAY_CONTROL.get(parent, ()) for parent in a for child in z):
                found["RK_CONTROLS edges not from a control point to a packet switch"].append(f"{u}->{v}")
        else:
            found["edges with an unknown type"].append(f"{u}->{v} {attrs.get('type')!r}")
    for node, kinds in kinds_of.items():
        if node not in linked:
            found["isolated nodes"].append(node)
        if s.PACKET_SWITCH in kinds and not any(s.PORT in kinds_of.get(c, ()) for c in contains_out[node]):
            found["packet switches without a port"].append(node)
        if s.PORT in kinds and not any(s.PACKET_SWITCH in kinds_of.get(p, ()) for p in contains_in[node]):
            found["ports not contained in a packet switch"].append(node)
    violations = []
    for what, items in found.items():
        shown = ", ".join(map(str, sorted(items, key=str)[:MAX_LISTED]))
        more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
        violations.append(f"{len(items)} {what}: {shown}{more}")
    return violations
