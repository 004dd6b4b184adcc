"""References: how a question points at a node, what a reference resolves to, and which point at one node alone.

A node is named outright, or pointed at by what holds it, the switches it shares, or the most or
least of something.

A reference is a JSON dict with a `form`:

    {"form": "name", "name": N}
    {"form": "holder", "kind": K, "of": REF}              the K that holds (at any depth) what REF names
    {"form": "sharing", "kind": K, "with": REF}           the K that holds the packet switches of what REF names
    {"form": "extreme", "kind": K, "metric": "capacity" | "ports", "most": bool, "in": REF | None}
    {"form": "port_at", "capacity": C, "of": REF}         the port of capacity C of the switch REF names
    {"form": "it"}                                        the node the request's first clause is about

K is an EK_* kind, or BLOCK (an aggregation or a spine block). `resolve` gives the sorted nodes a
reference may mean; a question only uses references whose resolution is one node (`describe`).
"""

from __future__ import annotations

from typing import Any

from .. import schema as s
from ....core.catalogue import Chooser
from .facts import Facts

BLOCK = "block"  #: an aggregation or a spine block, where a question does not say which
BLOCK_KINDS = (s.AGG_BLOCK, s.SPINEBLOCK)
#: the kinds a reference may point at (the datacenter itself is only a scope)
KINDS = (s.PACKET_SWITCH, s.PORT, s.AGG_BLOCK, s.SPINEBLOCK, s.SUPERBLOCK, s.RACK, s.CONTROL_DOMAIN)
#: the kinds that hold packet switches, which `sharing` relates to each other
SHARING_KINDS = (s.AGG_BLOCK, s.SPINEBLOCK, s.SUPERBLOCK, s.RACK, s.CONTROL_DOMAIN)
METRICS = ("capacity", "ports")


def name(node: str, kind: str | None = None) -> dict[str, Any]:
    """A node named outright (`kind`: a hint for the words that may go before the name)."""
    return {"form": "name", "name": node} if kind is None else {"form": "name", "name": node, "_kind": kind}


def is_kind(facts: Facts, node: str, kind: str) -> bool:
    return any(facts.has_kind(node, k) for k in BLOCK_KINDS) if kind == BLOCK else facts.has_kind(node, kind)


def resolve(ref: dict[str, Any], facts: Facts, it: str | None = None) -> list[str]:
    """The nodes a reference may mean on these facts (sorted); `it` is what {"form": "it"} means."""
    form = ref["form"]
    if form == "name":
        return [ref["name"]] if facts.exists(ref["name"]) else []
    if form == "it":
        return [it] if it is not None and facts.exists(it) else []
    if form == "holder":
        found = {a for n in resolve(ref["of"], facts, it) for a in facts.above(n) if is_kind(facts, a, ref["kind"])}
        return sorted(found)
    if form == "sharing":
        switches = {sw for n in resolve(ref["with"], facts, it) for sw in (n, *facts.below(n))
                    if facts.has_kind(sw, s.PACKET_SWITCH)}
        return sorted({a for sw in switches for a in facts.above(sw) if is_kind(facts, a, ref["kind"])})
    if form == "extreme":
        scopes = [None] if ref["in"] is None else resolve(ref["in"], facts, it)
        if len(scopes) != 1:
            return []
        return facts.extreme(ref["kind"], ref["metric"], ref["most"], scopes[0])
    if form == "port_at":
        switches = resolve(ref["of"], facts, it)
        return sorted(p for sw in switches for p in facts.children(sw)
                      if facts.has_kind(p, s.PORT) and facts.port_capacity(p) == ref["capacity"])
    raise ValueError(f"unknown reference form {form!r}")


def referents(ref: dict[str, Any] | None, facts: Facts, it: str | None = None) -> set[str]:
    """Every node a reference and the references inside it point at (scopes and what holds what included)."""
    if ref is None:
        return set()
    inner = {n for key in ("of", "with", "in") for n in referents(ref.get(key), facts, it)}
    return inner | set(resolve(ref, facts, it))


class Describer:
    """Draws, through a Chooser, a reference that resolves to one given node alone on `facts`."""

    def __init__(self, facts: Facts, chooser: Chooser) -> None:
        self.facts = facts
        self.chooser = chooser

    def describe(self, node: str, depth: int, avoid: frozenset[str] = frozenset(), outright: bool = True
                 ) -> dict[str, Any]:
        """A reference to node of at most `depth` nested references, naming none of `avoid` on the way;
        `outright=False`: through the graph, not by its name, wherever the graph offers a way."""
        choices = self._forms(node, avoid) if depth > 0 else {}
        through = [form for form, options in choices.items() if options]
        form = self.chooser.choice(through if through and not outright else ["name", *through])
        if form == "name":
            return name(node, self.facts.kind_of(node))
        kind, other, extra = self.chooser.choice(choices[form])
        inner = avoid | {node}
        if form == "holder":
            return {"form": "holder", "kind": kind, "of": self.describe(other, depth - 1, inner)}
        if form == "sharing":
            return {"form": "sharing", "kind": kind, "with": self.describe(other, depth - 1, inner)}
        if form == "extreme":
            metric, most = extra
            scope = None if other is None else self.describe(other, depth - 1, inner)
            return {"form": "extreme", "kind": kind, "metric": metric, "most": most, "in": scope}
        return {"form": "port_at", "capacity": extra, "of": self.describe(other, depth - 1, inner)}

    def _forms(self, node: str, avoid: frozenset[str]) -> dict[str, list[tuple[str, Any, Any]]]:
        """Per form, the (kind, other node, extra) choices that point at node alone; other is never in avoid."""
        kept = self.facts._forms
        if node not in kept:
            kept[node] = self._all_forms(node)
        return {form: [option for option in options if option[1] not in avoid] for form, options in kept[node].items()}

    def _all_forms(self, node: str) -> dict[str, list[tuple[str, Any, Any]]]:
        facts = self.facts
        avoid: frozenset[str] = frozenset()
        kind = facts.kind_of(node)
        kinds = [kind, BLOCK] if kind in BLOCK_KINDS else [kind]
        unique = self._unique
        holder = [(k, below, None) for below in self._near_below(node) if below not in avoid for k in kinds
                  if unique({"form": "holder", "kind": k, "of": name(below)}, node)]
        sharing = [(k, other, None) for other in self._sharing_partners(node) if other not in avoid for k in kinds
                   if unique({"form": "sharing", "kind": k, "with": name(other)}, node)]
        extreme = []
        scopes: list[str | None] = [a for a in facts.above(node) if not facts.has_kind(a, s.JUPITER)]
        if kind != s.PORT:
            scopes.append(None)
        for scope in scopes:
            if scope in avoid:
                continue
            for metric in (("capacity",) if kind == s.PORT else METRICS):
                for most in (True, False):
                    if facts.extreme(kind, metric, most, scope) == [node]:
                        extreme.append((kind, scope, (metric, most)))
        port_at = []
        if kind == s.PORT:
            for switch in facts.parents(node):
                if switch not in avoid and facts.has_kind(switch, s.PACKET_SWITCH):
                    ref = {"form": "port_at", "capacity": facts.port_capacity(node), "of": name(switch)}
                    if unique(ref, node):
                        port_at.append((s.PORT, switch, facts.port_capacity(node)))
        return {"holder": holder, "sharing": sharing, "extreme": extreme, "port_at": port_at}

    def _unique(self, ref: dict[str, Any], node: str) -> bool:
        return resolve(ref, self.facts) == [node]

    def _near_below(self, node: str) -> list[str]:
        """Children and grandchildren: what a person would name to point at a node by what it holds."""
        facts = self.facts
        children = facts.children(node)
        return list(dict.fromkeys([*children, *(g for c in children for g in facts.children(c))]))

    def _sharing_partners(self, node: str) -> list[str]:
        """Holders of node's switches that are neither above nor below node (a rack for a block, say)."""
        facts = self.facts
        if not any(facts.has_kind(node, k) for k in SHARING_KINDS):
            return []
        related = {node, *facts.above(node), *facts.below(node)}
        switches = [n for n in facts.below(node) if facts.has_kind(n, s.PACKET_SWITCH)]
        partners = {a for sw in switches for a in facts.above(sw)
                    if a not in related and any(facts.has_kind(a, k) for k in SHARING_KINDS)}
        return sorted(partners)
