"""Least privilege: does one policy set admit any flow (peer, port, protocol) that another does not?

Decided symbolically, not by probing a few service ports. Ports: for the two pods of a flow, every
rule of every policy selecting them (in either set) cuts 1..65535 into intervals on which both sets'
verdicts are constant, so one port per interval and protocol decides them all. Peers: the cluster's
pods, plus witnesses standing for every kind of peer a selector can tell apart that the cluster does
not hold (yet): in each namespace a pod without labels, a pod with a fresh value for every label key
in use, and in other namespaces (an unlabelled one, one with a fresh value for every namespace label
key) copies of every pod label set; and addresses outside the pods around every ipBlock edge. A flow
is admitted when the source's egress and the destination's ingress both admit it, so a widening
that the other direction still blocks does not count.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .bitsets import LabelIndex, bits_of, iter_bits
from .objects import NAMESPACE_NAME_LABEL, PROTOCOLS, ContainerPort, Namespace, Pod
from .policy import EGRESS, INGRESS, CompiledPolicy, IPBlockPeer
from .ports import PortRule

FRESH = "netarena-witness"  #: a label value and namespace name no real object uses
OUTSIDE = ("203.0.113.9", "2001:db8::9")  #: documentation addresses: a host outside any cluster
MAX_PORT = 65535


@dataclass(frozen=True)
class Excess:
    """One admitted flow the reference does not admit (ports low..high inclusive)."""

    source: str
    destination: str
    low: int
    high: int
    protocol: str

    def __str__(self) -> str:
        ports = str(self.low) if self.low == self.high else f"{self.low}-{self.high}"
        return f"{self.source} -> {self.destination} on {ports}/{self.protocol}"


@dataclass(frozen=True)
class _Node:
    """A pod (real or witness), or an address outside the cluster (namespace None)."""

    name: str
    namespace: str | None
    namespace_labels: Mapping[str, str]
    labels: Mapping[str, str]
    ip: str | None
    ports: tuple[ContainerPort, ...] = ()

    def names(self, port: int, protocol: str) -> frozenset[str]:
        return frozenset(p.name for p in self.ports if p.name and p.port == port and p.protocol == protocol)


def _witnesses(pods: list[Pod], namespaces: Mapping[str, Namespace],
               policies: Iterable[CompiledPolicy]) -> list[_Node]:
    spaces = dict(namespaces)
    for pod in pods:
        spaces.setdefault(pod.namespace, Namespace(pod.namespace))
    label_sets = {tuple(sorted(pod.labels.items())) for pod in pods}
    pod_keys = sorted({key for pod in pods for key in pod.labels})
    shapes = [()] + [((key, FRESH),) for key in pod_keys]
    namespace_keys = sorted({key for ns in spaces.values() for key in ns.labels if key != NAMESPACE_NAME_LABEL})
    foreign = [Namespace(FRESH)] + [Namespace(f"{FRESH}-{i}", {key: FRESH}) for i, key in enumerate(namespace_keys)]
    nodes = []
    for pod in pods:
        nodes.append(_Node(pod.key, pod.namespace, spaces[pod.namespace].labels, pod.labels, pod.ip, pod.ports))
    for namespace in [*spaces.values(), *foreign]:
        present = {tuple(sorted(p.labels.items())) for p in pods if p.namespace == namespace.name}
        for labels in sorted(set(shapes) | label_sets - present):
            text = ",".join(f"{k}={v}" for k, v in labels) or "no labels"
            nodes.append(_Node(f"{namespace.name}/<any pod: {text}>", namespace.name, namespace.labels,
                               dict(labels), None))
    taken = {pod.ip for pod in pods}  # an address a pod holds is that pod, not a host outside
    for address in sorted(_outside_addresses(policies) - taken):
        nodes.append(_Node(f"<outside {address}>", None, {}, {}, address))
    return nodes


def _outside_addresses(policies: Iterable[CompiledPolicy]) -> set[str]:
    addresses = set(OUTSIDE)
    for policy in policies:
        for rules in (policy.ingress or (), policy.egress or ()):
            for rule in rules:
                for peer in rule.peers or ():
                    if not isinstance(peer, IPBlockPeer):
                        continue
                    for net in (peer.cidr, *peer.excepts):
                        first, last = int(net.network_address), int(net.broadcast_address)
                        limit = 2 ** net.max_prefixlen - 1
                        for value in (first - 1, first, last, last + 1):
                            if 0 <= value <= limit:
                                addresses.add(str(ipaddress.ip_address(value) if net.version == 4
                                                  else ipaddress.IPv6Address(value)))
    return addresses


class _Side:
    """One policy set evaluated over the node universe: admitted-peer bitsets per node, port and protocol."""

    def __init__(self, policies: Mapping[str, CompiledPolicy], nodes: list[_Node], targets, peer_bits) -> None:
        self.policies = policies
        self.nodes = nodes
        self.peer_bits = peer_bits
        self.all = (1 << len(nodes)) - 1
        self.targets = {key: targets(policy) for key, policy in policies.items()}
        self._selecting: dict[str, list[list[CompiledPolicy]]] = {}
        for direction in (INGRESS, EGRESS):
            lists: list[list[CompiledPolicy]] = [[] for _ in nodes]
            for key in sorted(policies):
                if policies[key].rules(direction) is not None:
                    for index in iter_bits(self.targets[key]):
                        lists[index].append(policies[key])
            self._selecting[direction] = lists
        self._cache: dict[tuple[int, str, int, str], int] = {}

    def selecting(self, node: int, direction: str) -> list[CompiledPolicy]:
        return self._selecting[direction][node]

    def admitted(self, node: int, direction: str, port: int, protocol: str) -> int:
        """Peers `node` admits: sources (ingress) or destinations (egress); all when not isolated."""
        key = (node, direction, port, protocol)
        bits = self._cache.get(key)
        if bits is not None:
            return bits
        selecting = self.selecting(node, direction)
        if not selecting:
            bits = self.all
        else:
            bits = 0
            names = self.nodes[node].names(port, protocol)
            for policy in selecting:
                for rule in policy.rules(direction) or ():
                    peers = self.peer_bits(rule.peers)
                    if rule.ports is None:
                        bits |= peers
                    elif direction == INGRESS:
                        if any(entry.matches(port, protocol, names) for entry in rule.ports):
                            bits |= peers
                    else:
                        bits |= peers & self._destinations(rule.ports, port, protocol)
        self._cache[key] = bits
        return bits

    def _destinations(self, entries: tuple[PortRule, ...], port: int, protocol: str) -> int:
        bits = 0
        for entry in entries:
            if isinstance(entry.port, str):
                if entry.protocol == protocol:
                    for index, node in enumerate(self.nodes):
                        if entry.port in node.names(port, protocol):
                            bits |= 1 << index
            elif entry.matches(port, protocol, frozenset()):
                return self.all
        return bits


class Comparison:
    """`actual` against `reference` over one cluster's pods and namespaces."""

    def __init__(self, pods: Iterable[Pod], namespaces: Mapping[str, Namespace],
                 reference: Iterable[CompiledPolicy], actual: Iterable[CompiledPolicy]) -> None:
        self.reference = {p.key: p for p in reference}
        self.actual = {p.key: p for p in actual}
        self.nodes = _witnesses(list(pods), namespaces, [*self.reference.values(), *self.actual.values()])
        self._labels = LabelIndex([node.labels for node in self.nodes])
        self._in_namespace: dict[str, int] = {}
        self._namespace_labels: dict[str, Mapping[str, str]] = {}
        for index, node in enumerate(self.nodes):
            if node.namespace is not None:
                self._in_namespace[node.namespace] = self._in_namespace.get(node.namespace, 0) | 1 << index
                self._namespace_labels[node.namespace] = node.namespace_labels
        self._peers: dict[object, int] = {}
        self.sides = (_Side(self.reference, self.nodes, self._targets, self._peer_bits),
                      _Side(self.actual, self.nodes, self._targets, self._peer_bits))

    def _targets(self, policy: CompiledPolicy) -> int:
        return self._in_namespace.get(policy.namespace, 0) & self._labels.select(policy.pod_selector)

    def _peer_bits(self, peers) -> int:
        if peers is None:
            return (1 << len(self.nodes)) - 1
        bits = self._peers.get(peers)
        if bits is None:
            bits = 0
            for peer in peers:
                if isinstance(peer, IPBlockPeer):
                    bits |= bits_of(i for i, node in enumerate(self.nodes) if peer.contains(node.ip))
                    continue
                if peer.namespace_selector is None:
                    where = self._in_namespace.get(peer.policy_namespace, 0)
                else:
                    where = 0
                    for name, labels in self._namespace_labels.items():
                        if peer.namespace_selector.matches(labels):
                            where |= self._in_namespace[name]
                bits |= where if peer.pod_selector is None else where & self._labels.select(peer.pod_selector)
            self._peers[peers] = bits
        return bits

    def _changed(self) -> list[str]:
        return sorted(k for k in {*self.reference, *self.actual} if self.reference.get(k) != self.actual.get(k))

    def _affected(self, direction: str) -> list[int]:
        """Nodes whose `direction` may differ: those a changed policy selects, in either set."""
        bits = 0
        for key in self._changed():
            for side in self.sides:
                policy = side.policies.get(key)
                if policy is not None and policy.rules(direction) is not None:
                    bits |= side.targets[key]
        return list(iter_bits(bits))

    def _cuts(self, node: int, direction: str, protocol: str) -> list[int]:
        """First ports of the intervals on which `node`'s verdicts in `direction` are constant."""
        cuts = {1}
        for side in self.sides:
            for policy in side.selecting(node, direction):
                for rule in policy.rules(direction) or ():
                    for entry in rule.ports or ():
                        if entry.protocol != protocol or entry.port is None:
                            continue
                        if isinstance(entry.port, str):
                            owners = [self.nodes[node]] if direction == INGRESS else self.nodes
                            for owner in owners:
                                for p in owner.ports:
                                    if p.name == entry.port and p.protocol == protocol:
                                        cuts.update((p.port, p.port + 1))
                        else:
                            cuts.update((entry.port, (entry.end_port or entry.port) + 1))
        return sorted(c for c in cuts if c <= MAX_PORT)

    def _admits(self, side: _Side, source: int, destination: int, port: int, protocol: str) -> bool:
        return bool(side.admitted(destination, INGRESS, port, protocol) >> source & 1
                    and side.admitted(source, EGRESS, port, protocol) >> destination & 1)

    def _pair(self, source: int, destination: int) -> Excess | None:
        reference, actual = self.sides
        for protocol in PROTOCOLS:
            cuts = sorted(set(self._cuts(destination, INGRESS, protocol)) | set(self._cuts(source, EGRESS, protocol)))
            for position, port in enumerate(cuts):
                if (self._admits(actual, source, destination, port, protocol)
                        and not self._admits(reference, source, destination, port, protocol)):
                    high = cuts[position + 1] - 1 if position + 1 < len(cuts) else MAX_PORT
                    return Excess(self.nodes[source].name, self.nodes[destination].name, port, high, protocol)
        return None

    def excess(self, limit: int = 3) -> list[Excess]:
        """Up to `limit` flows `actual` admits and `reference` does not (empty: no wider anywhere)."""
        reference, actual = self.sides
        found: list[Excess] = []
        seen: set[tuple[int, int]] = set()
        for direction in (INGRESS, EGRESS):
            for node in self._affected(direction):
                for protocol in PROTOCOLS:
                    for port in self._cuts(node, direction, protocol):
                        wider = actual.admitted(node, direction, port, protocol) & ~reference.admitted(
                            node, direction, port, protocol)
                        wider &= ~(1 << node)  # loopback is the CNI's business, not the policies'
                        for peer in iter_bits(wider):
                            pair = (peer, node) if direction == INGRESS else (node, peer)
                            if self.nodes[pair[0]].namespace is None and self.nodes[pair[1]].namespace is None:
                                continue
                            if pair in seen:
                                continue
                            seen.add(pair)
                            result = self._pair(*pair)
                            if result is not None:
                                found.append(result)
                                if len(found) >= limit:
                                    return found
        return found


def wider_than(pods: Iterable[Pod], namespaces: Mapping[str, Namespace], reference: Iterable[CompiledPolicy],
               actual: Iterable[CompiledPolicy], limit: int = 3) -> list[Excess]:
    """Flows `actual` admits beyond `reference` (at most `limit` examples; empty when none)."""
    return Comparison(pods, namespaces, reference, actual).excess(limit)


__all__ = ["Excess", "Comparison", "wider_than"]
