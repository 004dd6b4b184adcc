"""The node namespace's iptables rules: Services as kube-proxy's DNAT, NetworkPolicies as filter chains.

A second implementation of NetworkPolicy beside the engine's bitsets (`netpol/engine.py`): policies
are read with the engine's parser (`compile_policy`, its selectors), but what they admit is decided by
the kernel, packet by packet, from rules written per rule of each policy:

- a pod isolated for egress has a chain its outgoing packets jump to; each rule of each policy
  selecting it marks what it admits (destinations: pod addresses, ipBlocks with their excepts; ports:
  numbers, ranges, names resolved on each destination pod), and an unmarked packet is dropped;
- the same for ingress on the packets going out to the pod's veth, with names resolved on the pod;
- replies pass as conntrack's ESTABLISHED, so only the first packet of a flow is judged, as on a CNI.

Services follow kube-proxy's iptables mode: a ClusterIP port jumps to a chain picking one ready
endpoint at random (`statistic`), DNAT to the endpoint's port (named target ports come resolved in
the EndpointSlices, as kube-proxy reads them); a ClusterIP port without endpoints is refused (REJECT),
and a pod reaching itself through its Service is masqueraded (hairpin).

No text a client wrote reaches a rule: every address, port, protocol and interface name is parsed into what it
claims to be (an IPv4 address, an integer in range, one of three protocols, a name of the node's own pattern)
and written from that value; a value that does not parse matches nothing (its pod, block, port or endpoint is
left out). The API server validates the same fields (kube/addresses.py); this is the second wall.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..kube.addresses import parse_ip
from ..netpol import CompiledPolicy, Namespace, Pod
from ..netpol.policy import EGRESS, INGRESS, IPBlockPeer, PodPeer
from ..netpol.ports import PortRule

EGRESS_MARK = "0x10000/0x10000"
INGRESS_MARK = "0x20000/0x20000"
MASQ_MARK = "0x4000/0x4000"
#: the ClusterIP range (network.SERVICE_RANGE): the node takes it as its own, so what no DNAT rule took ends in INPUT
SERVICE_RANGE = "10.96.0.0/12"
#: packets per second (new TCP connections and UDP datagrams, all stand-ins together) the harness's stand-ins
#: are sent at most; the rest is dropped in the kernel, so a pod flooding one costs the harness nothing more
SERVED_RATE, SERVED_BURST = 2000, 500
#: new connections per second (and burst) all pods together may open to the API server
API_RATE, API_BURST = 100, 50


#: iptables' names of the protocols a Service or a policy may name
PROTOCOLS = {"TCP": "tcp", "UDP": "udp", "SCTP": "sctp"}
#: the node's interface names (network.veth_name): anything else is never written into a rule
VETH = re.compile(r"^[a-z0-9][a-z0-9-]{0,14}$")


def address(text: object) -> ipaddress.IPv4Address | None:
    """An IPv4 address in its plain form, or None (for anything else, a newline included)."""
    found = parse_ip(text)
    return found if isinstance(found, ipaddress.IPv4Address) else None


def port_number(value) -> int | None:
    """A port number from 1 to 65535, or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535 else None


@dataclass(frozen=True)
class ProxiedPort:
    """One port of one ClusterIP Service and the endpoints kube-proxy would send it to, parsed."""

    key: str  #: namespace/name:port/protocol (only ever hashed into a chain's name)
    cluster_ip: ipaddress.IPv4Address
    port: int
    protocol: str  #: a key of PROTOCOLS
    endpoints: tuple[tuple[ipaddress.IPv4Address, int], ...]  #: (pod address, port) of the ready endpoints


@dataclass
class ClusterView:
    """What the rules are written from: pods with addresses, namespaces, policies, service ports."""

    pods: list[Pod] = field(default_factory=list)
    veths: dict[str, str] = field(default_factory=dict)  #: pod key -> its veth in the node namespace
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    policies: list[CompiledPolicy] = field(default_factory=list)
    services: list[ProxiedPort] = field(default_factory=list)
    #: pods whose servers are the harness's own stand-ins (in its process): what reaches them is rate-limited
    served: set[str] = field(default_factory=set)
    served_rate: tuple[int, int] = (SERVED_RATE, SERVED_BURST)  #: packets per second to them, and the burst
    #: the API server's listener in the node namespace (the `kubernetes` Service's endpoint), None: pods reach none
    api: tuple[str, int] | None = None


def _chain(prefix: str, *parts: str) -> str:
    return prefix + hashlib.sha256("/".join(parts).encode()).hexdigest()[:16].upper()


class _Rules:
    """Pods, namespaces and peers resolved once, for writing every policy's rules: only pods whose address and
    interface parse are written."""

    def __init__(self, view: ClusterView) -> None:
        self.view = view
        self.address: dict[str, ipaddress.IPv4Address] = {}
        for pod in view.pods:
            parsed = address(pod.ip)
            if parsed is not None and VETH.match(view.veths.get(pod.key, "")):
                self.address[pod.key] = parsed
        self.pods = [pod for pod in view.pods if pod.key in self.address]
        self.namespace_labels = {name: ns.labels for name, ns in view.namespaces.items()}

    def _namespace_labels(self, name: str) -> Mapping[str, str]:
        return self.namespace_labels.get(name) or Namespace(name).labels

    def peer_pods(self, peer: PodPeer) -> list[Pod]:
        found = []
        for pod in self.pods:
            if peer.namespace_selector is None:
                if pod.namespace != peer.policy_namespace:
                    continue
            elif not peer.namespace_selector.matches(self._namespace_labels(pod.namespace)):
                continue
            if peer.pod_selector is None or peer.pod_selector.matches(pod.labels):
                found.append(pod)
        return found

    def selected(self, policy: CompiledPolicy) -> list[Pod]:
        return [pod for pod in self.pods if pod.namespace == policy.namespace and policy.pod_selector.matches(pod.labels)]


def _port_matches(entry: PortRule, destination: Pod | None) -> list[str]:
    """iptables matches for one ports entry at a destination (None: an address that is no pod)."""
    proto = PROTOCOLS.get(entry.protocol)
    if proto is None:
        return []
    if entry.port is None:
        return [f"-p {proto}"]
    if isinstance(entry.port, str):  # a named port: resolved on the destination pod, nothing elsewhere
        number = port_number(destination.named_port(entry.port, entry.protocol)) if destination is not None else None
        return [] if number is None else [f"-p {proto} -m {proto} --dport {number}"]
    first, end = port_number(entry.port), port_number(entry.end_port)
    if first is None or (entry.end_port is not None and end is None):
        return []
    return [f"-p {proto} -m {proto} --dport {first}{f':{end}' if end is not None else ''}"]


def _policy_chains(rules: _Rules, direction: str) -> tuple[list[str], list[str]]:
    """(chain declarations, rule lines) for every pod isolated in `direction`, and its FORWARD jumps; for egress,
    the same jumps from INPUT too (a pod's only way to the node is the API server, which its egress policies judge
    as they judge any destination)."""
    declarations: list[str] = []
    lines: list[str] = []
    jumps: list[str] = []
    isolating: dict[str, list[CompiledPolicy]] = {}
    for policy in sorted(rules.view.policies, key=lambda p: p.key):
        if policy.rules(direction) is None:
            continue
        for pod in rules.selected(policy):
            isolating.setdefault(pod.key, []).append(policy)
    by_key = {pod.key: pod for pod in rules.pods}
    mark, peer_flag, own_flag = (EGRESS_MARK, "-d", "-i") if direction == EGRESS else (INGRESS_MARK, "-s", "-o")
    for pod_key in sorted(isolating):
        pod = by_key[pod_key]
        chain = _chain("NP-E-" if direction == EGRESS else "NP-I-", pod_key)
        declarations.append(f":{chain} - [0:0]")
        for policy in isolating[pod_key]:
            for index, rule in enumerate(policy.rules(direction)):
                lines += _rule_lines(rules, chain, rule, pod, direction, peer_flag, mark, f"{policy.key}#{index}",
                                     declarations)
        veth = rules.view.veths[pod_key]
        for hook in ("FORWARD", "INPUT") if direction == EGRESS else ("FORWARD",):
            jumps.append(f"-A {hook} {own_flag} {veth} -j {chain}")
            jumps.append(f"-A {hook} {own_flag} {veth} -m mark ! --mark {mark} -j DROP")
    return declarations, lines + jumps


def _rule_lines(rules: _Rules, chain: str, rule, pod: Pod, direction: str, peer_flag: str, mark: str,
                label: str, declarations: list[str]) -> list[str]:
    """The lines of one policy rule: mark the packet when a peer and a port of the rule match it."""
    writer = _RuleWriter(rules, chain, rule, pod, direction, peer_flag, f"-j MARK --set-xmark {mark}")
    if rule.peers is None:
        return writer.any_peer()
    lines = []
    for number, peer in enumerate(rule.peers):
        if isinstance(peer, PodPeer):
            lines += writer.to_pods(rules.peer_pods(peer))
            continue
        assert isinstance(peer, IPBlockPeer)
        # the direction is part of the name: a policy isolating a pod both ways has an ingress and an egress rule
        # of the same index, and one shared chain would mark a packet admitted both ways
        block = _chain("NP-B-", direction, label, str(number), pod.key)
        declarations.append(f":{block} - [0:0]")
        lines += writer.ip_block(peer, block)
    return lines


@dataclass
class _RuleWriter:
    """Writes the lines of one rule of one policy for one pod it isolates."""

    rules: _Rules
    chain: str
    rule: object  #: the compiled rule: its peers and ports (None: any)
    pod: Pod
    direction: str
    peer_flag: str  #: -d for egress, -s for ingress
    admit: str

    def ports(self, destination: Pod | None) -> list[str]:
        """Ingress ports are the pod's own (names resolve on it); egress ports are the destination's."""
        if self.rule.ports is None:
            return [""]
        target = self.pod if self.direction == INGRESS else destination
        return [match for entry in self.rule.ports for match in _port_matches(entry, target)]

    def line(self, chain: str, match: str, ports: str) -> str:
        return f"-A {chain} {match}{ports} {self.admit}".replace("  ", " ")

    def to_pods(self, pods: Iterable[Pod]) -> list[str]:
        return [self.line(self.chain, f"{self.peer_flag} {self.rules.address[other.key]}/32 ", ports) for other in pods
                for ports in self.ports(other)]

    def any_peer(self) -> list[str]:
        lines = [self.line(self.chain, "", ports) for ports in self.ports(None)]
        named = self.rule.ports is not None and any(isinstance(e.port, str) for e in self.rule.ports)
        if self.direction == EGRESS and named:  # egress to anywhere on a named port: only pods have port names
            return self.to_pods(self.rules.pods) + lines
        return lines

    def ip_block(self, peer: IPBlockPeer, block: str) -> list[str]:
        cidr = ipaddress.IPv4Network(peer.cidr) if getattr(peer.cidr, "version", 0) == 4 else None
        if cidr is None:  # an IPv6 block admits no packet of this IPv4 cluster
            return []
        excepts = [ipaddress.IPv4Network(e) for e in peer.excepts if getattr(e, "version", 0) == 4]
        lines = [f"-A {self.chain} {self.peer_flag} {cidr} -j {block}"]
        lines += [f"-A {block} {self.peer_flag} {excluded} -j RETURN" for excluded in excepts]
        destinations = [None]
        if self.direction == EGRESS:  # egress ports are named on the destination: each pod in the block apart
            destinations += [p for p in self.rules.pods if peer.contains(str(self.rules.address[p.key]))]
        for destination in destinations:
            target = f"{self.peer_flag} {self.rules.address[destination.key]}/32 " if destination is not None else ""
            lines += [self.line(block, target, ports) for ports in self.ports(destination)]
        return lines


def filter_table(view: ClusterView) -> str:
    rules = _Rules(view)
    lines = ["*filter", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]"]
    declarations = [":STANDIN-LIMIT - [0:0]", ":API-LIMIT - [0:0]"]
    policy_lines = []
    for direction in (EGRESS, INGRESS):
        chains, chain_lines = _policy_chains(rules, direction)
        declarations += chains
        policy_lines += chain_lines
    input_jumps = [line for line in policy_lines if line.startswith("-A INPUT ")]
    forward = [line for line in policy_lines if not line.startswith("-A INPUT ")]
    # the node itself: its own traffic and replies to it; nothing of a pod may open a connection to it but the API
    # server's listener, within its egress policies and a rate
    body = ["-A INPUT -i lo -j ACCEPT", "-A INPUT -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT"]
    if view.api is not None:
        address, port = view.api
        api = f"-d {address}/32 -p tcp -m tcp --dport {port}"
        body += [f"-A INPUT -i {view.veths[pod.key]} ! -s {pod.ip}/32 -j DROP" for pod in rules.pods]
        body += [*input_jumps, f"-A INPUT {api} --syn -j API-LIMIT", f"-A INPUT {api} -j ACCEPT"]
    body += [
        # a ClusterIP port no DNAT rule took (no ready endpoints, no such Service) is refused, as kube-proxy does
        f"-A INPUT -d {SERVICE_RANGE} -j REJECT --reject-with icmp-port-unreachable",
        "-A INPUT -j DROP",
        "-A FORWARD -m conntrack --ctstate INVALID -j DROP",
        f"-A STANDIN-LIMIT -m limit --limit {view.served_rate[0]}/sec --limit-burst {view.served_rate[1]} -j RETURN",
        "-A STANDIN-LIMIT -j DROP",
        f"-A API-LIMIT -m limit --limit {API_RATE}/sec --limit-burst {API_BURST} -j RETURN",
        "-A API-LIMIT -j DROP",
    ]
    for pod in rules.pods:  # a pod sends only from its own address, whatever conntrack knows (rp_filter agrees)
        body.append(f"-A FORWARD -i {view.veths[pod.key]} ! -s {rules.address[pod.key]}/32 -j DROP")
    for key in sorted(view.served):  # every datagram and every new connection to the harness's stand-ins
        if key in rules.address:
            body.append(f"-A FORWARD -o {view.veths[key]} -p udp -j STANDIN-LIMIT")
            body.append(f"-A FORWARD -o {view.veths[key]} -p tcp --syn -j STANDIN-LIMIT")
    body.append("-A FORWARD -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT")
    body += forward
    body.append("-A FORWARD -j ACCEPT")
    return "\n".join([*lines, *declarations, *body, "COMMIT", ""])


def nat_table(view: ClusterView) -> str:
    lines = ["*nat", ":PREROUTING ACCEPT [0:0]", ":INPUT ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]",
             ":POSTROUTING ACCEPT [0:0]", ":KUBE-SERVICES - [0:0]", ":KUBE-POSTROUTING - [0:0]"]
    body = ["-A PREROUTING -j KUBE-SERVICES", "-A OUTPUT -j KUBE-SERVICES", "-A POSTROUTING -j KUBE-POSTROUTING",
            f"-A KUBE-POSTROUTING -m mark --mark {MASQ_MARK} -j MASQUERADE"]
    for service in view.services:
        if not service.endpoints:
            continue
        proto = PROTOCOLS[service.protocol]
        chain = _chain("KUBE-SVC-", service.key)
        lines.append(f":{chain} - [0:0]")
        body.append(f"-A KUBE-SERVICES -d {service.cluster_ip}/32 -p {proto} -m {proto} --dport {service.port} "
                    f"-j {chain}")
        count = len(service.endpoints)
        for index, (address, port) in enumerate(service.endpoints):
            endpoint = _chain("KUBE-SEP-", service.key, str(address), str(port))
            lines.append(f":{endpoint} - [0:0]")
            left = count - index
            pick = "" if left == 1 else f"-m statistic --mode random --probability {1 / left:.11f} "
            body.append(f"-A {chain} {pick}-j {endpoint}")
            body.append(f"-A {endpoint} -s {address}/32 -j MARK --set-xmark {MASQ_MARK}")
            body.append(f"-A {endpoint} -p {proto} -m {proto} -j DNAT --to-destination {address}:{port}")
    return "\n".join([*lines, *body, "COMMIT", ""])


def ruleset(view: ClusterView) -> str:
    """The whole iptables-restore input for the node namespace (it replaces every table it names)."""
    return filter_table(view) + nat_table(view)


def service_ports(services: Iterable[Mapping], slices: Iterable[Mapping]) -> list[ProxiedPort]:
    """ClusterIP service ports with their ready endpoints, read from Services and EndpointSlices as kube-proxy does,
    parsed (a port, address or protocol that does not parse is left out)."""
    by_service = _slices_by_service(slices)
    found = []
    for svc in services:
        meta, spec = svc.get("metadata") or {}, svc.get("spec") or {}
        cluster_ip = address(spec.get("clusterIP"))
        if cluster_ip is None or spec.get("type") == "ExternalName":
            continue
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        for port in spec.get("ports") or []:
            if not isinstance(port, Mapping):
                continue
            protocol, number = port.get("protocol") or "TCP", port_number(port.get("port"))
            if protocol not in PROTOCOLS or number is None:
                continue
            endpoints = _ready_endpoints(by_service.get((namespace, name), []), port.get("name") or "", protocol)
            found.append(ProxiedPort(f"{namespace}/{name}:{number}/{protocol}", cluster_ip, number, protocol,
                                     endpoints))
    return found


def _slices_by_service(slices: Iterable[Mapping]) -> dict[tuple[str, str], list[Mapping]]:
    """EndpointSlices by the (namespace, name) of the Service their label names."""
    by_service: dict[tuple[str, str], list[Mapping]] = {}
    for item in slices:
        meta = item.get("metadata") or {}
        name = (meta.get("labels") or {}).get("kubernetes.io/service-name")
        if name:
            by_service.setdefault((meta.get("namespace", ""), name), []).append(item)
    return by_service


def _ready_endpoints(slices: list[Mapping], port_name: str,
                     protocol: str) -> tuple[tuple[ipaddress.IPv4Address, int], ...]:
    """(address, port) of the endpoints of `slices` not marked unready, for the service port of that name."""
    endpoints = set()
    for item in slices:
        if item.get("addressType", "IPv4") != "IPv4":
            continue
        numbers = _slice_ports(item, port_name, protocol)
        for endpoint in item.get("endpoints") or []:
            if not isinstance(endpoint, Mapping) or (endpoint.get("conditions") or {}).get("ready") is False:
                continue
            for text in endpoint.get("addresses") or []:
                parsed = address(text)
                if parsed is not None:
                    endpoints.update((parsed, number) for number in numbers)
    return tuple(sorted(endpoints))


def _slice_ports(item: Mapping, port_name: str, protocol: str) -> list[int]:
    return [number for p in item.get("ports") or [] if isinstance(p, Mapping)
            and (p.get("name") or "") == port_name and (p.get("protocol") or "TCP") == protocol
            and (number := port_number(p.get("port"))) is not None]
