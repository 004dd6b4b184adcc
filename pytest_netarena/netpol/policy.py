"""Compiling a networking.k8s.io/v1 NetworkPolicy dict into a validated, defaulted, hashable value."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import PolicyValidationError
from .ports import PortRule, compile_port
from .selectors import LabelSelector, compile_selector, describe

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
INGRESS, EGRESS = "Ingress", "Egress"


@dataclass(frozen=True)
class PodPeer:
    """Pods selected by namespace and pod selectors. namespace_selector None: the policy's own namespace."""

    namespace_selector: LabelSelector | None
    pod_selector: LabelSelector | None  # None: every pod of the selected namespaces
    policy_namespace: str

    def __str__(self) -> str:
        where = f"namespace {self.policy_namespace}" if self.namespace_selector is None else (
            f"namespaces [{describe(self.namespace_selector)}]")
        pods = "all pods" if self.pod_selector is None else f"pods [{describe(self.pod_selector)}]"
        return f"{pods} in {where}"


@dataclass(frozen=True)
class IPBlockPeer:
    cidr: IPNetwork
    excepts: tuple[IPNetwork, ...] = ()

    def contains(self, ip: str | None) -> bool:
        if ip is None:
            return False
        try:
            address = ipaddress.ip_address(ip)
        except ValueError:
            return False
        if address.version != self.cidr.version or address not in self.cidr:
            return False
        return not any(address in excluded for excluded in self.excepts)

    def __str__(self) -> str:
        text = f"ipBlock {self.cidr}"
        return text + (f" except {', '.join(map(str, self.excepts))}" if self.excepts else "")


Peer = PodPeer | IPBlockPeer


@dataclass(frozen=True)
class Rule:
    """One ingress/egress rule. peers None: every peer; ports None: every port and protocol."""

    peers: tuple[Peer, ...] | None = None
    ports: tuple[PortRule, ...] | None = None


@dataclass(frozen=True)
class CompiledPolicy:
    namespace: str
    name: str
    pod_selector: LabelSelector
    ingress: tuple[Rule, ...] | None  # None: Ingress not in policyTypes; (): isolates, allows nothing
    egress: tuple[Rule, ...] | None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def rules(self, direction: str) -> tuple[Rule, ...] | None:
        return self.ingress if direction == INGRESS else self.egress


def compile_policy(obj: Mapping[str, Any], default_namespace: str = "default") -> CompiledPolicy:
    """Validate like the API server and apply its defaults (policyTypes, protocol TCP)."""
    if not isinstance(obj, Mapping):
        raise PolicyValidationError("?", "<root>", f"must be an object, not {type(obj).__name__}")
    metadata = obj.get("metadata") or {}
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    namespace = (metadata.get("namespace") if isinstance(metadata, Mapping) else None) or default_namespace
    label = f"{namespace}/{name}" if isinstance(name, str) and name else f"{namespace}/?"

    def fail(path: str, message: str) -> PolicyValidationError:
        return PolicyValidationError(label, path, message)

    kind, api_version = obj.get("kind", "NetworkPolicy"), obj.get("apiVersion", "networking.k8s.io/v1")
    if kind != "NetworkPolicy" or api_version != "networking.k8s.io/v1":
        raise fail("kind", f"expected networking.k8s.io/v1 NetworkPolicy, got {api_version} {kind}")
    if not isinstance(name, str) or not name:
        raise fail("metadata.name", "is required")
    spec = obj.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise fail("spec", "must be an object")
    unknown = set(spec) - {"podSelector", "ingress", "egress", "policyTypes"}
    if unknown:
        raise fail("spec", f"unknown field(s) {sorted(unknown)}")

    # A missing spec.podSelector decodes to the empty selector on the API server: all pods.
    pod_selector = compile_selector(spec.get("podSelector"), "spec.podSelector", fail)
    ingress_raw = _rule_list(spec, "ingress", fail)
    egress_raw = _rule_list(spec, "egress", fail)
    policy_types = _policy_types(spec.get("policyTypes"), bool(egress_raw), fail)

    ingress = tuple(_compile_rule(r, f"spec.ingress[{i}]", "from", namespace, fail) for i, r in enumerate(ingress_raw))
    egress = tuple(_compile_rule(r, f"spec.egress[{i}]", "to", namespace, fail) for i, r in enumerate(egress_raw))
    return CompiledPolicy(
        namespace=namespace,
        name=name,
        pod_selector=pod_selector,
        ingress=ingress if INGRESS in policy_types else None,
        egress=egress if EGRESS in policy_types else None,
    )


def _rule_list(spec: Mapping[str, Any], field: str, fail) -> list:
    raw = spec.get(field)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise fail(f"spec.{field}", "must be a list of rules")
    return raw


def _policy_types(raw: Any, has_egress_rules: bool, fail) -> tuple[str, ...]:
    if not raw:
        return (INGRESS, EGRESS) if has_egress_rules else (INGRESS,)
    if not isinstance(raw, list):
        raise fail("spec.policyTypes", "must be a list")
    if len(raw) > 2:
        raise fail("spec.policyTypes", "may not specify more than two policyTypes")
    for index, value in enumerate(raw):
        if value not in (INGRESS, EGRESS):
            raise fail(f"spec.policyTypes[{index}]", f"unsupported value {value!r} (expected Ingress or Egress)")
    return tuple(raw)


def _compile_rule(raw: Any, path: str, peers_field: str, namespace: str, fail) -> Rule:
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise fail(path, "must be an object")
    unknown = set(raw) - {peers_field, "ports"}
    if unknown:
        raise fail(path, f"unknown field(s) {sorted(unknown)}")
    peers_raw, ports_raw = raw.get(peers_field), raw.get("ports")
    for field, value in ((peers_field, peers_raw), ("ports", ports_raw)):
        if value is not None and not isinstance(value, list):
            raise fail(f"{path}.{field}", "must be a list")
    peers = tuple(_compile_peer(p, f"{path}.{peers_field}[{i}]", namespace, fail) for i, p in enumerate(peers_raw or []))
    ports = tuple(compile_port(p, f"{path}.ports[{i}]", fail) for i, p in enumerate(ports_raw or []))
    # Missing and empty lists both mean "everything".
    return Rule(peers or None, ports or None)


def _compile_peer(raw: Any, path: str, namespace: str, fail) -> Peer:
    if not isinstance(raw, Mapping):
        raise fail(path, "must be an object")
    unknown = set(raw) - {"podSelector", "namespaceSelector", "ipBlock"}
    if unknown:
        raise fail(path, f"unknown field(s) {sorted(unknown)}")
    has_pod = raw.get("podSelector") is not None
    has_namespace = raw.get("namespaceSelector") is not None
    has_block = raw.get("ipBlock") is not None
    if has_block and (has_pod or has_namespace):
        raise fail(path, "may not specify ipBlock together with podSelector or namespaceSelector")
    if has_block:
        return _compile_ip_block(raw["ipBlock"], f"{path}.ipBlock", fail)
    if not (has_pod or has_namespace):
        raise fail(path, "must specify a peer: podSelector, namespaceSelector or ipBlock")
    namespace_selector = compile_selector(raw.get("namespaceSelector"), f"{path}.namespaceSelector", fail) if has_namespace else None
    pod_selector = compile_selector(raw.get("podSelector"), f"{path}.podSelector", fail) if has_pod else None
    if pod_selector is not None and pod_selector.is_empty:
        pod_selector = None  # `podSelector: {}` and no podSelector select the same pods
    return PodPeer(namespace_selector, pod_selector, namespace)


def _parse_cidr(value: Any, path: str, fail) -> IPNetwork:
    if not isinstance(value, str) or "/" not in value:
        raise fail(path, f"invalid CIDR {value!r} (expected an address/prefix such as 10.0.0.0/16)")
    try:
        # Host bits are accepted, as the API server does: 10.1.2.3/16 means 10.1.0.0/16.
        return ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise fail(path, f"invalid CIDR {value!r}") from None


def _compile_ip_block(raw: Any, path: str, fail) -> IPBlockPeer:
    if not isinstance(raw, Mapping):
        raise fail(path, "must be an object with cidr and except")
    unknown = set(raw) - {"cidr", "except"}
    if unknown:
        raise fail(path, f"unknown field(s) {sorted(unknown)}")
    if raw.get("cidr") in (None, ""):
        raise fail(f"{path}.cidr", "is required")
    cidr = _parse_cidr(raw["cidr"], f"{path}.cidr", fail)
    excepts_raw = raw.get("except") or []
    if not isinstance(excepts_raw, list):
        raise fail(f"{path}.except", "must be a list of CIDRs")
    excepts = []
    for index, item in enumerate(excepts_raw):
        excluded = _parse_cidr(item, f"{path}.except[{index}]", fail)
        if (excluded.version != cidr.version or not excluded.subnet_of(cidr)  # type: ignore[arg-type]  # same version
                or excluded.prefixlen <= cidr.prefixlen):
            raise fail(f"{path}.except[{index}]", f"{item} must be a strict subset of cidr {raw['cidr']}")
        excepts.append(excluded)
    return IPBlockPeer(cidr, tuple(excepts))


__all__ = ["CompiledPolicy", "Rule", "PodPeer", "IPBlockPeer", "Peer", "compile_policy", "INGRESS", "EGRESS"]
