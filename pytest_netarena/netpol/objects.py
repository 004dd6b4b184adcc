"""Value objects of the cluster the engine reasons about: namespaces, pods, services and probes."""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

PROTOCOLS = ("TCP", "UDP", "SCTP")
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def _frozen_labels(labels: Mapping[str, str] | None) -> Mapping[str, str]:
    return dict(labels or {})


class _Namespaced:
    """What pods and services share: they are known, and hashed, by namespace and name."""

    namespace: str
    name: str

    def __hash__(self) -> int:
        return hash((self.namespace, self.name))

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The control plane always sets this label; policies select namespaces by name through it.
        labels = dict(_frozen_labels(self.labels))
        labels[NAMESPACE_NAME_LABEL] = self.name
        object.__setattr__(self, "labels", labels)

    def __hash__(self) -> int:
        return hash(self.name)

    @property
    def key(self) -> str:
        return self.name


@dataclass(frozen=True)
class ContainerPort:
    port: int
    protocol: str = "TCP"
    name: str | None = None


@dataclass(frozen=True)
class Pod(_Namespaced):
    namespace: str
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    ip: str | None = None
    ports: tuple[ContainerPort, ...] = ()

    __hash__ = _Namespaced.__hash__  # dataclass(frozen=True) would otherwise hash the labels too

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", _frozen_labels(self.labels))
        object.__setattr__(self, "ports", tuple(self.ports))

    def named_port(self, name: str, protocol: str) -> int | None:
        """The number of the container port called `name` on `protocol`, if the pod has one."""
        for container_port in self.ports:
            if container_port.name == name and container_port.protocol == protocol:
                return container_port.port
        return None


@dataclass(frozen=True)
class ServicePort:
    port: int
    target_port: int | str | None = None  # None: same as `port`
    protocol: str = "TCP"
    name: str | None = None

    @property
    def target(self) -> int | str:
        return self.port if self.target_port is None else self.target_port

    @classmethod
    def of(cls, spec: Mapping[str, Any]) -> ServicePort:
        """One entry of a Service's spec.ports as the API server stored it (already validated there)."""
        return cls(int(spec["port"]), spec.get("targetPort"), spec.get("protocol") or "TCP", spec.get("name"))


@dataclass(frozen=True)
class Service(_Namespaced):
    namespace: str
    name: str
    selector: Mapping[str, str] = field(default_factory=dict)
    ports: tuple[ServicePort, ...] = ()

    __hash__ = _Namespaced.__hash__  # dataclass(frozen=True) would otherwise hash the selector too

    def __post_init__(self) -> None:
        object.__setattr__(self, "selector", _frozen_labels(self.selector))
        object.__setattr__(self, "ports", tuple(self.ports))

    def find_port(self, port: int | str, protocol: str) -> ServicePort | None:
        """The service port matching a number or a port name on `protocol`."""
        for service_port in self.ports:
            if service_port.protocol != protocol:
                continue
            if service_port.port == port or (service_port.name is not None and service_port.name == port):
                return service_port
        return None


@dataclass(frozen=True)
class Probe:
    """One question: may `source` (NS/POD) reach `destination` (NS/POD, or NS/SERVICE) on a port?

    `port` is a number or a port name: a container port name for a pod, a service port name
    (or number) for a service.
    """

    source: str
    destination: str
    port: int | str
    protocol: str = "TCP"
    to_service: bool = False

    @classmethod
    def to_pod(cls, source: str, destination: str, port: int | str, protocol: str = "TCP") -> Probe:
        return cls(source, destination, port, protocol, False)

    @classmethod
    def to_svc(cls, source: str, service: str, port: int | str, protocol: str = "TCP") -> Probe:
        return cls(source, service, port, protocol, True)

    def __str__(self) -> str:
        arrow = "svc:" if self.to_service else ""
        return f"{self.source} -> {arrow}{self.destination}:{self.port}/{self.protocol}"
