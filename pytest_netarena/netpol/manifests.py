"""Reading Kubernetes manifests (and probe lists) into engine objects, with precise errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.safe_read import TooLarge, read_capped
from ..core.safe_yaml import YAMLRefused, load_documents
from .engine import ConnectivityModel
from .errors import ManifestError, ObjectError
from .objects import PROTOCOLS, ContainerPort, Namespace, Pod, Probe, Service, ServicePort
from .policy import CompiledPolicy, compile_policy

MAX_BYTES = 8 * 1024 * 1024  #: per input file; manifests of a 2000-service app stay far below


@dataclass(frozen=True)
class ClusterObjects:
    namespaces: tuple[Namespace, ...] = ()
    pods: tuple[Pod, ...] = ()
    services: tuple[Service, ...] = ()
    policies: tuple[CompiledPolicy, ...] = ()

    def model(self, listening_ports: bool = False) -> ConnectivityModel:
        return ConnectivityModel(self.namespaces, self.pods, self.policies, self.services, listening_ports)


def read_bounded(path: str | Path, limit: int = MAX_BYTES) -> str:
    """The file's text, refusing (not truncating) anything over `limit` bytes; reading stops there,
    so a device or pipe without end (/dev/zero) costs at most `limit` bytes."""
    try:
        data = read_capped(path, limit)
    except OSError as error:
        raise ManifestError(f"{path}: cannot read: {error.strerror or error}") from None
    except TooLarge as error:
        raise ManifestError(f"{error} (the input limit); split it into several -f files") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ManifestError(f"{path}: not UTF-8 text (byte {error.start})") from None


def load_text(text: str, source: str) -> list[Any]:
    """The non-empty documents of YAML or JSON text, through the one bounded loader (core/safe_yaml.py)."""
    try:
        return load_documents(text)
    except YAMLRefused as error:
        raise ManifestError(f"{source}: {error}") from None


def load_yaml_documents(path: str | Path) -> list[Any]:
    """All documents of a (multi-document) YAML or JSON file, empty documents dropped; bounded input:
    an endless, deep or alias-bombed file is a ManifestError, never a hang."""
    return load_text(read_bounded(path), str(path))


def flatten(documents: Iterable[Any], source: str = "<input>") -> list[Mapping[str, Any]]:
    """Objects of the documents, with `kind: List` (and *List kinds) expanded."""
    objects = []
    for number, document in enumerate(documents, 1):
        if not isinstance(document, Mapping):
            raise ManifestError(f"{source}: document {number} is not a Kubernetes object (got {type(document).__name__})")
        kind = document.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in document:
            items = document.get("items") or []
            if not isinstance(items, list):
                raise ManifestError(f"{source}: document {number}: items must be a list")
            objects.extend(flatten(items, source))
        else:
            if not isinstance(kind, str):
                raise ManifestError(f"{source}: document {number} has no kind")
            objects.append(document)
    return objects


def cluster_from_objects(objects: Iterable[Mapping[str, Any]]) -> ClusterObjects:
    """Namespaces, Pods, Services and NetworkPolicies of `objects`; other kinds are ignored."""
    #: kind -> (its builder, its field of ClusterObjects)
    builders: dict[str, tuple[Callable[[Any], Any], str]] = {"Namespace": (namespace_from_manifest, "namespaces"), "Pod": (pod_from_manifest, "pods"),
                "Service": (service_from_manifest, "services"), "NetworkPolicy": (compile_policy, "policies")}
    found: dict[str, dict[str, Any]] = {kind: {} for kind in builders}
    for obj in objects:
        kind = obj.get("kind")
        if isinstance(kind, str) and kind in builders:
            made = builders[kind][0](obj)
            found[kind][made.key] = made  # a later object of the same key replaces the earlier one
    return ClusterObjects(**{builders[kind][1]: tuple(by_key.values()) for kind, by_key in found.items()})


def load_cluster(paths: Iterable[str | Path]) -> ClusterObjects:
    objects = []
    for path in paths:
        objects.extend(flatten(load_yaml_documents(path), str(path)))
    return cluster_from_objects(objects)


def _metadata(obj: Mapping[str, Any], kind: str, namespaced: bool) -> tuple[str, str, dict[str, str]]:
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise ObjectError(f"{kind} without metadata.name")
    name = metadata["name"]
    namespace = metadata.get("namespace") or "default" if namespaced else ""
    labels = metadata.get("labels") or {}
    if not isinstance(labels, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items()):
        raise ObjectError(f"{kind} {name}: metadata.labels must map strings to strings")
    return namespace, name, dict(labels)


def namespace_from_manifest(obj: Mapping[str, Any]) -> Namespace:
    _, name, labels = _metadata(obj, "Namespace", namespaced=False)
    return Namespace(name, labels)


def _protocol(value: Any, where: str) -> str:
    protocol = value or "TCP"
    if protocol not in PROTOCOLS:
        raise ObjectError(f"{where}: unsupported protocol {protocol!r} (expected TCP, UDP or SCTP)")
    return protocol


def _port_number(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        raise ObjectError(f"{where}: {value!r} is not a port number between 1 and 65535")
    return value


def pod_from_manifest(obj: Mapping[str, Any]) -> Pod:
    namespace, name, labels = _metadata(obj, "Pod", namespaced=True)
    where = f"Pod {namespace}/{name}"
    spec = obj.get("spec") or {}
    containers = spec.get("containers") or [] if isinstance(spec, Mapping) else None
    if not isinstance(containers, list):
        raise ObjectError(f"{where}: spec.containers must be a list")
    ports = []
    for c_index, container in enumerate(containers):
        for p_index, port in enumerate((container or {}).get("ports") or []):
            at = f"{where}: spec.containers[{c_index}].ports[{p_index}]"
            if not isinstance(port, Mapping):
                raise ObjectError(f"{at} must be an object")
            port_name = port.get("name")
            if port_name is not None and not isinstance(port_name, str):
                raise ObjectError(f"{at}.name must be a string")
            ports.append(ContainerPort(_port_number(port.get("containerPort"), f"{at}.containerPort"),
                                       _protocol(port.get("protocol"), f"{at}.protocol"), port_name or None))
    status = obj.get("status") or {}
    ip = status.get("podIP") if isinstance(status, Mapping) else None
    return Pod(namespace, name, labels, ip or None, tuple(ports))


def service_from_manifest(obj: Mapping[str, Any]) -> Service:
    namespace, name, _ = _metadata(obj, "Service", namespaced=True)
    where = f"Service {namespace}/{name}"
    spec = obj.get("spec") or {}
    selector = spec.get("selector") or {}
    if not isinstance(selector, Mapping):
        raise ObjectError(f"{where}: spec.selector must be a map")
    ports = []
    for index, port in enumerate(spec.get("ports") or []):
        at = f"{where}: spec.ports[{index}]"
        if not isinstance(port, Mapping):
            raise ObjectError(f"{at} must be an object")
        target = port.get("targetPort")
        if target is not None and not isinstance(target, str):
            target = _port_number(target, f"{at}.targetPort")
        ports.append(ServicePort(_port_number(port.get("port"), f"{at}.port"), target,
                                 _protocol(port.get("protocol"), f"{at}.protocol"), port.get("name")))
    return Service(namespace, name, dict(selector), tuple(ports))


def parse_probes(data: Any, source: str = "<probes>") -> list[Probe]:
    """A YAML list of {from: NS/POD, to: NS/POD, port: NUMBER|NAME, protocol: TCP|UDP|SCTP}."""
    if not isinstance(data, list):
        raise ManifestError(f"{source}: expected a list of probes")
    probes = []
    for index, item in enumerate(data):
        where = f"{source}: probe {index}"
        if not isinstance(item, Mapping):
            raise ManifestError(f"{where}: must be an object with from, to, port and protocol")
        unknown = set(item) - {"from", "to", "port", "protocol"}
        if unknown:
            raise ManifestError(f"{where}: unknown field(s) {sorted(unknown)}")
        for field in ("from", "to"):
            value = item.get(field)
            if not isinstance(value, str) or value.count("/") != 1 or "" in value.split("/"):
                raise ManifestError(f"{where}: {field!r} must be NAMESPACE/POD, got {value!r}")
        port = item.get("port")
        if isinstance(port, str) and port.isdigit():
            port = int(port)  # a quoted number in YAML still means a number
        if isinstance(port, bool) or not ((isinstance(port, int) and 1 <= port <= 65535)
                                          or (isinstance(port, str) and port)):
            raise ManifestError(f"{where}: port must be a number between 1 and 65535 or a port name, got {port!r}")
        protocol = item.get("protocol") or "TCP"
        if protocol not in PROTOCOLS:
            raise ManifestError(f"{where}: protocol must be TCP, UDP or SCTP, got {protocol!r}")
        probes.append(Probe(item["from"], item["to"], port, protocol))
    return probes
