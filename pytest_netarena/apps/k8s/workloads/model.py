"""The microservice application an episode runs: workloads, services, healthy policies, and its flows."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any

from ....core import resources
from ....core.errors import UsageError

FIXTURES = resources.fixtures("k8s")  # the checkout's fixtures/k8s, or the wheel's copy inside the package
ARROW = "\u2192"


@dataclass(frozen=True)
class ExposedPort:
    port: int
    target_port: int | str  #: a container port number or name
    protocol: str = "TCP"
    name: str | None = None


@dataclass(frozen=True)
class Workload:
    """A Deployment whose pods are labelled app=<name>; `service` is None for pure clients."""

    name: str
    container: str
    container_ports: tuple[tuple[int, str], ...]  #: (port, protocol): what the pods listen on
    service_ports: tuple[ExposedPort, ...] = ()
    named_ports: tuple[tuple[str, int, str], ...] = ()  #: (name, port, protocol) of the named container ports

    def port_name(self, port: int, protocol: str) -> str | None:
        for name, number, proto in self.named_ports:
            if (number, proto) == (port, protocol):
                return name
        return None

    @property
    def has_service(self) -> bool:
        return bool(self.service_ports)


@dataclass(frozen=True, order=True)
class Flow:
    """Client workload -> service port: one cell of the connectivity matrix."""

    source: str
    service: str
    port: int
    protocol: str = "TCP"

    def __str__(self) -> str:
        suffix = "" if self.protocol == "TCP" else f"/{self.protocol}"
        return f"{self.source} {ARROW} {self.service}:{self.port}{suffix}"


@dataclass(frozen=True)
class AppSpec:
    """One application: its manifests (Deployments, Services) and its 12-or-N healthy policies."""

    name: str
    workloads: tuple[Workload, ...]
    manifests: tuple[dict[str, Any], ...]  #: Deployments and Services, no namespace set
    policies: tuple[dict[str, Any], ...]  #: healthy NetworkPolicies, no namespace set

    def workload(self, name: str) -> Workload:
        for workload in self.workloads:
            if workload.name == name:
                return workload
        raise KeyError(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(workload.name for workload in self.workloads)

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(workload.name for workload in self.workloads if workload.has_service)

    def flows(self) -> tuple[Flow, ...]:
        """Every client pod -> every port of every other workload's service (self-pairs left out:
        Kubernetes leaves loopback to the CNI, so it is neither intended nor probed)."""
        return self._flows

    @cached_property
    def _flows(self) -> tuple[Flow, ...]:
        # One tuple per app: every matrix of the app then shares the same Flow objects in the same
        # order, which lets matrix comparisons walk two dicts side by side instead of hashing.
        return tuple(
            Flow(source.name, server.name, port.port, port.protocol)
            for source in self.workloads
            for server in self.workloads
            if server.name != source.name
            for port in server.service_ports
        )

    def healthy_policies(self) -> dict[str, dict[str, Any]]:
        """Policy name -> a fresh deep copy of its healthy manifest."""
        return {policy["metadata"]["name"]: copy.deepcopy(policy) for policy in self.policies}

    def healthy_view(self) -> Mapping[str, Mapping[str, Any]]:
        """Policy name -> its healthy manifest, shared and read-only: never mutate these (no copy is
        made, which is what per-episode code wants; use healthy_policies() for manifests to change)."""
        return MappingProxyType({policy["metadata"]["name"]: policy for policy in self.policies})


def _workloads_from_manifests(manifests: list[dict[str, Any]]) -> tuple[Workload, ...]:
    services = {doc["metadata"]["name"]: doc for doc in manifests if doc.get("kind") == "Service"}
    workloads = []
    for doc in manifests:
        if doc.get("kind") != "Deployment":
            continue
        name = doc["metadata"]["name"]
        containers = doc["spec"]["template"]["spec"]["containers"]
        container = containers[0]
        declared = [p for c in containers for p in c.get("ports") or ()]
        ports = tuple((p["containerPort"], p.get("protocol", "TCP")) for p in declared)
        named = tuple((p["name"], p["containerPort"], p.get("protocol", "TCP")) for p in declared if p.get("name"))
        service = services.get(name)
        service_ports = tuple(
            ExposedPort(p["port"], p.get("targetPort", p["port"]), p.get("protocol", "TCP"), p.get("name"))
            for p in (service["spec"]["ports"] if service else ())
        )
        workloads.append(Workload(name, container["name"], ports, service_ports, named))
    return tuple(sorted(workloads, key=lambda w: w.name))


def app_from_manifests(name: str, manifests: list[dict[str, Any]], policies: list[dict[str, Any]]) -> AppSpec:
    manifests = [doc for doc in manifests if doc]
    policies = sorted((doc for doc in policies if doc), key=lambda p: p["metadata"]["name"])
    return AppSpec(name, _workloads_from_manifests(manifests), tuple(manifests), tuple(policies))


@cache
def online_boutique() -> AppSpec:
    """Online Boutique from fixtures/k8s/online-boutique (11 services, 12 workloads, 12 policies)."""
    import yaml

    folder = FIXTURES / "online-boutique"
    if not folder.is_dir():
        raise UsageError(f"the Online Boutique fixtures are missing: {folder} does not exist")
    # our own files: libyaml's safe loader where it is built (a tenth of a second less in every worker's start)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    manifests = list(yaml.load_all((folder / "app.yaml").read_text(), Loader=loader))
    policies = list(yaml.load_all((folder / "network-policies.yaml").read_text(), Loader=loader))
    return app_from_manifests("online-boutique", manifests, policies)
