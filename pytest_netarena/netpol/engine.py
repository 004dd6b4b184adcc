"""ConnectivityModel: the cluster's pods, services and policies, answering reachability probes fast.

How it is fast: pods get indices; every selector, peer and policy target is evaluated once into a
bitset (a Python int) through an inverted label index; for each pod and (port, protocol) the set of
admitted peers is one OR over the rules of the policies selecting it, cached; a probe is then two bit
tests. A policy change only touches the pods that policy selects (before or after), so caches are
dropped for those pods alone and live views recompute only the probes whose source or destination
is among them. A pod, namespace or service change re-indexes everything (rare in the suite).

Semantics (see tests/netpol for the cases): a flow is allowed when the source's egress AND the
destination's ingress allow it; a pod no policy isolates in a direction allows everything in that
direction; loopback (source == destination) is evaluated like any other flow. A named port that the
destination does not have for the protocol denies the probe. A service probe is allowed if ANY
backend pod (pods of the service's namespace matching its selector) accepts the flow on the target
port; a service without selector or backends, or without the requested port, denies.

With `listening_ports=True` a pod also has to listen: it accepts only on its declared container
ports (named ports resolve to them), so a Service whose targetPort no container declares reaches
nothing, as on a cluster whose containers serve exactly their declared ports.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.selectors import LabelSelector, selector_from_labels
from .bitsets import LabelIndex, bits_of, iter_bits
from .errors import UnknownObjectError
from .explain import Explanation, FlowVerdict, explain_direction
from .objects import Namespace, Pod, Probe, Service
from .policy import EGRESS, INGRESS, CompiledPolicy, IPBlockPeer, PodPeer, Rule, compile_policy
from .ports import PortRule


@dataclass(frozen=True)
class _BoundRule:
    peers: int  # bitset of pods the rule's peers select (all pods when it has no peers)
    ports: tuple[PortRule, ...] | None


@dataclass(frozen=True)
class _BoundPolicy:
    targets: int  # pods selected by spec.podSelector in the policy's namespace
    ingress: tuple[_BoundRule, ...] | None
    egress: tuple[_BoundRule, ...] | None

    def isolates(self, direction: str) -> int:
        rules = self.ingress if direction == INGRESS else self.egress
        return self.targets if rules is not None else 0


class _Index:
    """Everything derived from the pods, namespaces and services; rebuilt when any of them changes."""

    def __init__(self, namespaces: Mapping[str, Namespace], pods: Mapping[str, Pod],
                 services: Mapping[str, Service], listening_ports: bool = False) -> None:
        self.pods = list(pods.values())
        # Per pod the (port, protocol) pairs it listens on; None: every port (policy semantics only).
        self.listens: list[frozenset[tuple[int, str]]] | None = (
            [frozenset((p.port, p.protocol) for p in pod.ports) for pod in self.pods] if listening_ports else None)
        self.position = {pod.key: index for index, pod in enumerate(self.pods)}
        self.all = (1 << len(self.pods)) - 1
        self.pod_labels = LabelIndex([pod.labels for pod in self.pods])
        self.namespaces = list(namespaces.values())
        self.namespace_labels = LabelIndex([ns.labels for ns in self.namespaces])
        self.pods_in_namespace: dict[str, int] = {}
        # (name, protocol, number) -> pods having that named container port; per pod (number, protocol) -> names
        self.named_port_pods: dict[tuple[str, str, int], int] = {}
        self.port_names: list[dict[tuple[int, str], frozenset[str]]] = []
        for index, pod in enumerate(self.pods):
            bit = 1 << index
            self.pods_in_namespace[pod.namespace] = self.pods_in_namespace.get(pod.namespace, 0) | bit
            names: dict[tuple[int, str], set[str]] = {}
            for port in pod.ports:
                if port.name:
                    key = (port.name, port.protocol, port.port)
                    self.named_port_pods[key] = self.named_port_pods.get(key, 0) | bit
                    names.setdefault((port.port, port.protocol), set()).add(port.name)
            self.port_names.append({k: frozenset(v) for k, v in names.items()})
        self.service_backends = {
            key: (self.pods_in_namespace.get(svc.namespace, 0) & self.pod_labels.select(selector_from_labels(svc.selector))
                  if svc.selector else 0)
            for key, svc in services.items()
        }
        self._pod_selections: dict[LabelSelector, int] = {}
        self._namespace_selections: dict[LabelSelector, int] = {}
        self._ip_blocks: dict[IPBlockPeer, int] = {}

    def select_pods(self, selector: LabelSelector) -> int:
        bits = self._pod_selections.get(selector)
        if bits is None:
            bits = self._pod_selections[selector] = self.pod_labels.select(selector)
        return bits

    def pods_of_namespaces(self, selector: LabelSelector) -> int:
        bits = self._namespace_selections.get(selector)
        if bits is None:
            bits = 0
            for index in iter_bits(self.namespace_labels.select(selector)):
                bits |= self.pods_in_namespace.get(self.namespaces[index].name, 0)
            self._namespace_selections[selector] = bits
        return bits

    def peer_pods(self, peer) -> int:
        if isinstance(peer, IPBlockPeer):
            bits = self._ip_blocks.get(peer)
            if bits is None:
                bits = self._ip_blocks[peer] = bits_of(i for i, pod in enumerate(self.pods) if peer.contains(pod.ip))
            return bits
        assert isinstance(peer, PodPeer)
        if peer.namespace_selector is None:
            bits = self.pods_in_namespace.get(peer.policy_namespace, 0)
        else:
            bits = self.pods_of_namespaces(peer.namespace_selector)
        return bits if peer.pod_selector is None else bits & self.select_pods(peer.pod_selector)

    def bind(self, policy: CompiledPolicy) -> _BoundPolicy:
        targets = self.pods_in_namespace.get(policy.namespace, 0) & self.select_pods(policy.pod_selector)
        return _BoundPolicy(targets, self._bind_rules(policy.ingress), self._bind_rules(policy.egress))

    def _bind_rules(self, rules: tuple[Rule, ...] | None) -> tuple[_BoundRule, ...] | None:
        if rules is None:
            return None
        bound = []
        for rule in rules:
            if rule.peers is None:
                peers = self.all
            else:
                peers = 0
                for peer in rule.peers:
                    peers |= self.peer_pods(peer)
            bound.append(_BoundRule(peers, rule.ports))
        return tuple(bound)


class ConnectivityModel:
    """The cluster state plus cached reachability. Mutate it with set_*/remove_*; query with
    allowed(), matrix(), explain(); watch() returns a live matrix refreshed incrementally."""

    def __init__(self, namespaces: Iterable[Namespace] = (), pods: Iterable[Pod] = (),
                 policies: Iterable[Mapping[str, Any] | CompiledPolicy] = (), services: Iterable[Service] = (),
                 listening_ports: bool = False) -> None:
        self.listening_ports = listening_ports
        self._namespaces: dict[str, Namespace] = {}
        self._pods: dict[str, Pod] = {}
        self._services: dict[str, Service] = {}
        self._policies: dict[str, CompiledPolicy] = {}
        self._views: weakref.WeakSet[MatrixView] = weakref.WeakSet()
        self._index: _Index | None = None
        for namespace in namespaces:
            self._namespaces[namespace.name] = namespace
        for pod in pods:
            self._add_pod(pod)
        for service in services:
            self._services[service.key] = service
        for policy in policies:
            compiled = policy if isinstance(policy, CompiledPolicy) else compile_policy(policy)
            self._policies[compiled.key] = compiled

    # ----- state -----------------------------------------------------------------------------

    @property
    def namespaces(self) -> Mapping[str, Namespace]:
        return dict(self._namespaces)

    @property
    def pods(self) -> Mapping[str, Pod]:
        return dict(self._pods)

    @property
    def services(self) -> Mapping[str, Service]:
        return dict(self._services)

    @property
    def policies(self) -> Mapping[str, CompiledPolicy]:
        return dict(self._policies)

    def _add_pod(self, pod: Pod) -> None:
        # A namespace nobody declared still exists for the pod, with only its name label.
        self._namespaces.setdefault(pod.namespace, Namespace(pod.namespace))
        self._pods[pod.key] = pod

    def set_namespace(self, namespace: Namespace) -> None:
        self._namespaces[namespace.name] = namespace
        self._reindex()

    def set_pod(self, pod: Pod) -> None:
        self._add_pod(pod)
        self._reindex()

    def set_policy(self, policy: Mapping[str, Any] | CompiledPolicy) -> CompiledPolicy:
        """Create or replace (by namespace/name) a policy; validates a dict first. Returns the compiled policy."""
        compiled = policy if isinstance(policy, CompiledPolicy) else compile_policy(policy)
        old = self._policies.get(compiled.key)
        self._policies[compiled.key] = compiled
        if old != compiled:
            self._policy_changed(compiled.key, old)
        return compiled

    def remove_policy(self, key: str) -> None:
        self._require(self._policies, key, "NetworkPolicy")
        old = self._policies.pop(key)
        self._policy_changed(key, old)

    def _require(self, table: Mapping[str, Any], key: str, what: str) -> None:
        if key not in table:
            raise UnknownObjectError(f"unknown {what} {key!r}")

    def _reindex(self) -> None:
        self._index = None
        for view in self._views:
            view._stale_all = True

    # ----- compiled state ----------------------------------------------------------------------

    def _ensure_index(self) -> _Index:
        if self._index is None:
            index = _Index(self._namespaces, self._pods, self._services, self.listening_ports)
            self._bound = {key: index.bind(policy) for key, policy in self._policies.items()}
            count = len(index.pods)
            self._selecting: dict[str, list[list[str]]] = {INGRESS: [[] for _ in range(count)], EGRESS: [[] for _ in range(count)]}
            for key in sorted(self._bound):
                self._register(key, self._bound[key])
            self._allowed_cache: dict[str, list[dict[Any, int]]] = {INGRESS: [{} for _ in range(count)], EGRESS: [{} for _ in range(count)]}
            self._index = index
        return self._index

    def _register(self, key: str, bound: _BoundPolicy) -> None:
        for direction in (INGRESS, EGRESS):
            lists = self._selecting[direction]
            for position in iter_bits(bound.isolates(direction)):
                lists[position].append(key)

    def _policy_changed(self, key: str, old: CompiledPolicy | None) -> None:
        if self._index is None:
            return  # nothing cached yet
        index = self._index
        previous = self._bound.pop(key, None)
        dirty = {INGRESS: 0, EGRESS: 0}
        if previous is not None:
            for direction in (INGRESS, EGRESS):
                bits = previous.isolates(direction)
                dirty[direction] |= bits
                for position in iter_bits(bits):
                    self._selecting[direction][position].remove(key)
        if key in self._policies:
            bound = self._bound[key] = index.bind(self._policies[key])
            for direction in (INGRESS, EGRESS):
                bits = bound.isolates(direction)
                dirty[direction] |= bits
                for position in iter_bits(bits):
                    keys = self._selecting[direction][position]
                    keys.append(key)
                    keys.sort()
        for direction, bits in dirty.items():
            caches = self._allowed_cache[direction]
            for position in iter_bits(bits):
                caches[position] = {}
        for view in self._views:
            view._stale_destinations |= dirty[INGRESS]
            view._stale_sources |= dirty[EGRESS]

    def _allowed_peers(self, direction: str, position: int, port: int, protocol: str) -> int:
        """Bitset of the peers `position` admits in `direction` on port/protocol (all when not isolated).

        For ingress the peers are sources; for egress they are destinations, and a named port in an
        egress rule admits exactly the destinations whose container port of that name is `port`."""
        cache = self._allowed_cache[direction][position]
        key = (port, protocol)
        bits = cache.get(key)
        if bits is not None:
            return bits
        index = self._ensure_index()
        keys = self._selecting[direction][position]
        if not keys:
            bits = index.all
        else:
            bits = 0
            names = index.port_names[position].get(key, frozenset()) if direction == INGRESS else frozenset()
            for policy_key in keys:
                bound = self._bound[policy_key]
                for rule in (bound.ingress if direction == INGRESS else bound.egress) or ():
                    if rule.ports is None:
                        bits |= rule.peers
                    elif direction == INGRESS:
                        if any(entry.matches(port, protocol, names) for entry in rule.ports):
                            bits |= rule.peers
                    else:
                        bits |= rule.peers & self._egress_port_destinations(rule.ports, port, protocol)
        cache[key] = bits
        return bits

    def _egress_port_destinations(self, entries: tuple[PortRule, ...], port: int, protocol: str) -> int:
        destinations = 0
        for entry in entries:
            if isinstance(entry.port, str):
                if entry.protocol == protocol:
                    destinations |= self._ensure_index().named_port_pods.get((entry.port, protocol, port), 0)
            elif entry.matches(port, protocol, frozenset()):
                return self._ensure_index().all
        return destinations

    # ----- queries -----------------------------------------------------------------------------

    def _position(self, key: str) -> int:
        position = self._ensure_index().position.get(key)
        if position is None:
            raise UnknownObjectError(f"unknown pod {key!r}")
        return position

    def _flow_allowed(self, source: int, destination: int, port: int, protocol: str) -> bool:
        return bool((self._allowed_peers(EGRESS, source, port, protocol) >> destination) & 1
                    and (self._allowed_peers(INGRESS, destination, port, protocol) >> source) & 1)

    def _resolve_target(self, position: int, port: int | str, protocol: str) -> int | None:
        """The port number a flow to the pod at `position` uses, or None when it cannot be delivered
        (an unknown port name, or with listening_ports a port the pod does not listen on)."""
        index = self._ensure_index()
        number = port if isinstance(port, int) else index.pods[position].named_port(port, protocol)
        if number is not None and index.listens is not None and (number, protocol) not in index.listens[position]:
            return None
        return number

    def _service_flows(self, probe: Probe) -> tuple[Service, Any, list[int]]:
        service = self._services.get(probe.destination)
        if service is None:
            raise UnknownObjectError(f"unknown service {probe.destination!r}")
        return service, service.find_port(probe.port, probe.protocol), list(
            iter_bits(self._ensure_index().service_backends[service.key]))

    def allowed(self, probe: Probe) -> bool:
        """The verdict for one probe. Raises UnknownObjectError for unknown pods or services."""
        self._ensure_index()
        source = self._position(probe.source)
        if not probe.to_service:
            destination = self._position(probe.destination)
            port = self._resolve_target(destination, probe.port, probe.protocol)
            return port is not None and self._flow_allowed(source, destination, port, probe.protocol)
        _, service_port, backends = self._service_flows(probe)
        if service_port is None:
            return False
        for backend in backends:
            port = self._resolve_target(backend, service_port.target, probe.protocol)
            if port is not None and self._flow_allowed(source, backend, port, probe.protocol):
                return True
        return False

    def matrix(self, probes: Iterable[Probe]) -> dict[Probe, bool]:
        """Verdicts for many probes (input order kept)."""
        self._ensure_index()
        allowed = self.allowed
        return {probe: allowed(probe) for probe in probes}

    def explain(self, probe: Probe) -> Explanation:
        """The verdict with its reasons, computed rule by rule from the policy definitions."""
        index = self._ensure_index()
        source = index.pods[self._position(probe.source)]
        if not probe.to_service:
            destination = index.pods[self._position(probe.destination)]
            return Explanation(probe, (self._explain_flow(source, destination, probe.port, probe.protocol),))
        service, service_port, backends = self._service_flows(probe)
        if service_port is None:
            return Explanation(probe, (), f"service {service.key} has no port {probe.port}/{probe.protocol}")
        flows = tuple(self._explain_flow(source, index.pods[b], service_port.target, probe.protocol) for b in backends)
        note = "" if flows else f"service {service.key} selects no pods"
        return Explanation(probe, flows, note)

    def _explain_flow(self, source: Pod, destination: Pod, port: int | str, protocol: str) -> FlowVerdict:
        number = self._resolve_target(self._ensure_index().position[destination.key], port, protocol)
        if number is None:
            why = (f"{destination.key} has no container port named {port!r} for {protocol}" if isinstance(port, str)
                   else f"{destination.key} does not listen on {port}/{protocol} (no container declares it)")
            return FlowVerdict(source.key, destination.key, None, protocol, None, None, why)
        policies = self._policies.values()
        egress = explain_direction(EGRESS, source, destination, number, protocol, destination, policies, self._namespaces)
        ingress = explain_direction(INGRESS, destination, source, number, protocol, destination, policies, self._namespaces)
        return FlowVerdict(source.key, destination.key, number, protocol, egress, ingress)

    def selecting_policies(self, pod_key: str, direction: str) -> tuple[str, ...]:
        """Keys of the policies isolating the pod in `direction` (Ingress or Egress), sorted."""
        self._ensure_index()
        return tuple(self._selecting[direction][self._position(pod_key)])

    def watch(self, probes: Iterable[Probe]) -> MatrixView:
        """A live matrix over `probes`; call refresh() after changes to recompute affected probes only."""
        view = MatrixView(self, probes)
        self._views.add(view)
        return view


class MatrixView:
    """Verdicts for a fixed probe list, kept current by recomputing only probes a change can affect."""

    def __init__(self, model: ConnectivityModel, probes: Iterable[Probe]) -> None:
        self._model = model
        self.probes = tuple(dict.fromkeys(probes))
        self.results: dict[Probe, bool] = {}
        self._verdicts: list[bool | None] = [None] * len(self.probes)
        self._stale_all = True
        self._stale_sources = 0
        self._stale_destinations = 0
        self.refresh()

    def _index_probes(self) -> None:
        # Internally probes are numbered: hashing Probe objects would dominate an incremental refresh.
        model = self._model
        index = model._ensure_index()
        position = index.position
        self._by_source: dict[int, list[int]] = {}
        self._by_destination: dict[int, list[int]] = {}
        # Pod probes resolved once to (source, destination, port number or None, protocol); service probes: None.
        self._cells: list[tuple[int, int, int | None, str] | None] = []
        for number, probe in enumerate(self.probes):
            source = position.get(probe.source)
            if source is None:
                raise UnknownObjectError(f"unknown pod {probe.source!r}")
            self._by_source.setdefault(source, []).append(number)
            if probe.to_service:
                backends = model._service_flows(probe)[2]
                self._cells.append(None)
            else:
                destination = model._position(probe.destination)
                backends = [destination]
                port = model._resolve_target(destination, probe.port, probe.protocol)
                self._cells.append((source, destination, port, probe.protocol))
            for backend in backends:
                self._by_destination.setdefault(backend, []).append(number)

    def refresh(self) -> dict[Probe, bool]:
        """Bring results up to date; returns the probes whose verdict changed, with the new verdict."""
        model = self._model
        model._ensure_index()
        if self._stale_all:
            self._index_probes()
            affected: Iterable[int] = range(len(self.probes))
        else:
            touched: set[int] = set()
            for position in iter_bits(self._stale_sources):
                touched.update(self._by_source.get(position, ()))
            for position in iter_bits(self._stale_destinations):
                touched.update(self._by_destination.get(position, ()))
            affected = sorted(touched)
        self._stale_all, self._stale_sources, self._stale_destinations = False, 0, 0
        changed = {}
        cells, verdicts, flow_allowed = self._cells, self._verdicts, model._flow_allowed
        for number in affected:
            cell = cells[number]
            if cell is None:
                verdict = model.allowed(self.probes[number])
            else:
                source, destination, port, protocol = cell
                verdict = port is not None and flow_allowed(source, destination, port, protocol)
            if verdicts[number] != verdict:
                verdicts[number] = verdict
                probe = self.probes[number]
                changed[probe] = verdict
                self.results[probe] = verdict
        return changed
