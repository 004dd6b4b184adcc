"""Verdicts that carry their reasons, and the rule-by-rule evaluator that produces them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .objects import Namespace, Pod, Probe
from .policy import EGRESS, INGRESS, CompiledPolicy, IPBlockPeer, PodPeer, Rule


@dataclass(frozen=True)
class RuleMatch:
    """A rule that admits the flow. peer None: the rule has no from/to, so it admits every peer."""

    policy: str
    direction: str
    rule: int
    peer: int | None

    def __str__(self) -> str:
        where = "any peer" if self.peer is None else f"peer {self.peer}"
        return f"{self.policy} {self.direction.lower()}[{self.rule}] ({where})"


@dataclass(frozen=True)
class DirectionVerdict:
    """One side of a flow: the destination's ingress or the source's egress."""

    direction: str
    pod: str
    policies: tuple[str, ...]  # policies selecting `pod` with this direction in their policyTypes
    allowed_by: tuple[RuleMatch, ...]

    @property
    def isolated(self) -> bool:
        return bool(self.policies)

    @property
    def allowed(self) -> bool:
        return not self.isolated or bool(self.allowed_by)

    def __str__(self) -> str:
        side = self.direction.lower()
        if not self.isolated:
            return f"{side} of {self.pod}: not isolated (no policy selects it for {self.direction})"
        selected = ", ".join(self.policies)
        if self.allowed_by:
            return f"{side} of {self.pod}: allowed by {', '.join(map(str, self.allowed_by))} (selected by {selected})"
        return f"{side} of {self.pod}: denied, no rule matches (selected by {selected})"


@dataclass(frozen=True)
class FlowVerdict:
    """Source pod -> destination pod on a resolved port. port None: a named port that did not resolve."""

    source: str
    destination: str
    port: int | None
    protocol: str
    egress: DirectionVerdict | None
    ingress: DirectionVerdict | None
    note: str = ""

    @property
    def allowed(self) -> bool:
        return (self.port is not None and self.egress is not None and self.ingress is not None
                and self.egress.allowed and self.ingress.allowed)

    def __str__(self) -> str:
        head = f"{self.source} -> {self.destination}:{self.port}/{self.protocol}: {'allowed' if self.allowed else 'denied'}"
        lines = [head] + [f"  {part}" for part in (self.egress, self.ingress) if part is not None]
        if self.note:
            lines.append(f"  {self.note}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Explanation:
    """A probe's verdict. A service probe has one flow per backend pod and is allowed if any flow is."""

    probe: Probe
    flows: tuple[FlowVerdict, ...]
    note: str = ""

    @property
    def allowed(self) -> bool:
        return any(flow.allowed for flow in self.flows)

    def __str__(self) -> str:
        lines = [f"{self.probe}: {'allowed' if self.allowed else 'denied'}"]
        if self.note:
            lines.append(f"  {self.note}")
        lines += ["  " + line for flow in self.flows for line in str(flow).splitlines()]
        return "\n".join(lines)


def explain_direction(
    direction: str,
    subject: Pod,
    peer: Pod,
    port: int,
    protocol: str,
    destination: Pod,
    policies: Iterable[CompiledPolicy],
    namespaces: Mapping[str, Namespace],
) -> DirectionVerdict:
    """Evaluate every rule of every policy selecting `subject` (straight from the definitions,
    independent of the engine's caches, so the two can check each other)."""
    selecting, matches = [], []
    for policy in sorted(policies, key=lambda p: p.key):
        rules = policy.rules(direction)
        if rules is None or policy.namespace != subject.namespace or not policy.pod_selector.matches(subject.labels):
            continue
        selecting.append(policy.key)
        for rule_index, rule in enumerate(rules):
            if not _ports_match(rule, port, protocol, destination):
                continue
            if rule.peers is None:
                matches.append(RuleMatch(policy.key, direction, rule_index, None))
                continue
            for peer_index, rule_peer in enumerate(rule.peers):
                if _peer_matches(rule_peer, peer, namespaces):
                    matches.append(RuleMatch(policy.key, direction, rule_index, peer_index))
    return DirectionVerdict(direction, subject.key, tuple(selecting), tuple(matches))


def _ports_match(rule: Rule, port: int, protocol: str, destination: Pod) -> bool:
    if rule.ports is None:
        return True
    names = frozenset(p.name for p in destination.ports if p.name and p.port == port and p.protocol == protocol)
    return any(entry.matches(port, protocol, names) for entry in rule.ports)


def _peer_matches(rule_peer, pod: Pod, namespaces: Mapping[str, Namespace]) -> bool:
    if isinstance(rule_peer, IPBlockPeer):
        return rule_peer.contains(pod.ip)
    assert isinstance(rule_peer, PodPeer)
    if rule_peer.namespace_selector is None:
        if pod.namespace != rule_peer.policy_namespace:
            return False
    else:
        namespace = namespaces.get(pod.namespace) or Namespace(pod.namespace)
        if not rule_peer.namespace_selector.matches(namespace.labels):
            return False
    return rule_peer.pod_selector is None or rule_peer.pod_selector.matches(pod.labels)


__all__ = ["RuleMatch", "DirectionVerdict", "FlowVerdict", "Explanation", "explain_direction", "INGRESS", "EGRESS"]
