"""The upstream e2e model: namespaces x, y, z; pods a, b, c; ports 80/81 over TCP, UDP and SCTP; plus helpers."""

from __future__ import annotations

from typing import Any, Iterable

from pytest_netarena.netpol import ConnectivityModel, ContainerPort, Namespace, Pod, Probe

NAMESPACES = ("x", "y", "z")
POD_NAMES = ("a", "b", "c")
PROTOCOLS = ("TCP", "UDP", "SCTP")
PORTS = (80, 81)
PODS = tuple(f"{ns}/{pod}" for ns in NAMESPACES for pod in POD_NAMES)


def pod_ip(key: str) -> str:
    ns, pod = key.split("/")
    return f"10.{NAMESPACES.index(ns) + 1}.0.{POD_NAMES.index(pod) + 1}"


def make_pods() -> list[Pod]:
    ports = tuple(ContainerPort(port, proto, f"serve-{port}-{proto.lower()}") for port in PORTS for proto in PROTOCOLS)
    return [Pod(key.split("/")[0], key.split("/")[1], {"pod": key.split("/")[1]}, pod_ip(key), ports) for key in PODS]


def make_namespaces() -> list[Namespace]:
    return [Namespace(ns, {"ns": ns}) for ns in NAMESPACES]


def make_model(*policies: dict[str, Any]) -> ConnectivityModel:
    return ConnectivityModel(make_namespaces(), make_pods(), policies)


def netpol(name: str, namespace: str = "x", pod_selector: dict | None = None, *, ingress: Any = None,
           egress: Any = None, types: list[str] | None = None) -> dict[str, Any]:
    """A NetworkPolicy manifest; keys left None are omitted so defaulting can be tested."""
    spec: dict[str, Any] = {"podSelector": pod_selector if pod_selector is not None else {}}
    if ingress is not None:
        spec["ingress"] = ingress
    if egress is not None:
        spec["egress"] = egress
    if types is not None:
        spec["policyTypes"] = types
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def pods_labelled(**labels: str) -> dict:
    return {"matchLabels": labels}


class Reachability:
    """An expected truth table over PODS (loopback ignored, as in the e2e suite)."""

    def __init__(self, default: bool = True) -> None:
        self.expected = {(s, d): default for s in PODS for d in PODS if s != d}

    def _set(self, sources: Iterable[str], destinations: Iterable[str], value: bool) -> Reachability:
        for s in sources:
            for d in destinations:
                if s != d:
                    self.expected[(s, d)] = value
        return self

    def to(self, destinations: str | Iterable[str], value: bool, sources: Iterable[str] = PODS) -> Reachability:
        return self._set(sources, _expand(destinations), value)

    def frm(self, sources: str | Iterable[str], value: bool, destinations: Iterable[str] = PODS) -> Reachability:
        return self._set(_expand(sources), destinations, value)

    def pair(self, source: str, destination: str, value: bool) -> Reachability:
        return self._set([source], [destination], value)

    def mismatches(self, model: ConnectivityModel, port: int | str, protocol: str = "TCP") -> list[str]:
        probes = {Probe(s, d, port, protocol): pair for pair in self.expected for s, d in [pair]}
        actual = model.matrix(probes)
        return [f"{probe.source}->{probe.destination} expected {self.expected[pair]} got {actual[probe]}"
                for probe, pair in probes.items() if actual[probe] != self.expected[pair]]


def _expand(selection: str | Iterable[str]) -> list[str]:
    """'x' -> the pods of namespace x; 'x/a' -> that pod; lists are expanded item by item."""
    items = [selection] if isinstance(selection, str) else list(selection)
    result = []
    for item in items:
        result.extend([item] if "/" in item else [p for p in PODS if p.startswith(item + "/")])
    return result


def assert_reachability(model: ConnectivityModel, expected: Reachability, port: int | str = 80,
                        protocol: str = "TCP") -> None:
    problems = expected.mismatches(model, port, protocol)
    assert not problems, f"{len(problems)} wrong cells on {port}/{protocol}:\n" + "\n".join(problems)
