"""The k3s profile: a Harbor task's k3s services read as nodes, and what k3s puts in kube-system beside Kubernetes.

A task written for k3s declares its cluster in environment/docker-compose.yaml: one `rancher/k3s` service runs
`server`, others run `agent`, each with `--node-name`, `--node-label` and `--node-taint`, and the server's
`--disable` flags drop bundled components. `from_compose` reads those into nodes.NodeSpec and a Profile; `objects`
gives what k3s installs (as data; a runtime runs their pods): the traefik ingress controller (Deployment, Service,
IngressClass, its CRDs), the local-path provisioner and its default StorageClass, metrics-server, k3s's own CRDs.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .nodes import DEFAULT_NAME, NodeSpec, parse_label, parse_taint

COMPONENTS = ("coredns", "servicelb", "traefik", "local-storage", "metrics-server")
TRAEFIK_IMAGE = "rancher/mirrored-library-traefik:2.11.10"
LOCAL_PATH_IMAGE = "rancher/local-path-provisioner:v0.0.30"
METRICS_IMAGE = "rancher/mirrored-metrics-server:v0.7.2"
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
TRAEFIK_KINDS = ("IngressRoute", "IngressRouteTCP", "IngressRouteUDP", "Middleware", "MiddlewareTCP",
                 "ServersTransport", "ServersTransportTCP", "TLSOption", "TLSStore", "TraefikService")
K3S_KINDS = (("k3s.cattle.io", "Addon", "Namespaced"), ("k3s.cattle.io", "ETCDSnapshotFile", "Cluster"),
             ("helm.cattle.io", "HelmChart", "Namespaced"), ("helm.cattle.io", "HelmChartConfig", "Namespaced"))
MAX_COMPOSE = 1 << 20


@dataclass(frozen=True)
class Profile:
    """A k3s server's bundled components, less those its `--disable` flags drop."""

    disabled: frozenset[str] = field(default_factory=frozenset)

    def has(self, component: str) -> bool:
        return component not in self.disabled


def _flags(command) -> list[tuple[str, str]]:
    """(flag, value) of a k3s command line, `--flag=value` or `--flag value` alike."""
    argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command or []]
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg.startswith("--"):
            name, sep, value = arg.partition("=")
            if not sep and i + 1 < len(argv) and not argv[i + 1].startswith("-"):
                value, i = argv[i + 1], i + 1
            out.append((name, value))
        i += 1
    return out


def from_compose(task: Path) -> tuple[list[NodeSpec], Profile] | None:
    """The nodes and profile of a task's k3s services (None: the task declares no k3s cluster)."""
    from ..core.safe_yaml import load_documents

    path = task / "environment" / "docker-compose.yaml"
    try:
        raw = path.read_bytes()[:MAX_COMPOSE + 1]
        documents = load_documents(raw) if len(raw) <= MAX_COMPOSE else []
    except (OSError, ValueError):
        return None
    services = (documents[0] or {}).get("services") if documents and isinstance(documents[0], dict) else None
    if not isinstance(services, dict):
        return None
    servers, agents, disabled = [], [], set()
    for service_name, service in services.items():
        if not isinstance(service, dict) or not str(service.get("image", "")).startswith("rancher/k3s"):
            continue
        command = service.get("command") or []
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        role = argv[0] if argv and not argv[0].startswith("-") else "server"
        # a node k3s names after its container's hostname (random unless set): the default node's name for the
        # server, the service's for an agent
        spec = NodeSpec(str(service.get("hostname") or (DEFAULT_NAME if role == "server" else service_name)),
                        control_plane=role == "server")
        try:
            for flag, value in _flags(argv):
                if flag == "--node-name" and value:
                    spec.name = value
                elif flag == "--node-label":
                    key, label = parse_label(value)
                    spec.labels[key] = label
                elif flag == "--node-taint":
                    spec.taints.append(parse_taint(value))
                elif flag == "--disable" and role == "server":
                    disabled.update(part.strip() for part in value.split(",") if part.strip())
        except ValueError:
            return None
        (servers if role == "server" else agents).append(spec)
    if not servers:
        return None
    return servers + agents, Profile(frozenset(disabled))


def _crd(group: str, kind: str, scope: str = "Namespaced", version: str = "v1") -> dict:
    plural = kind.lower() + ("es" if kind.endswith("s") else "s")
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": scope,
                     "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": kind + "List"},
                     "versions": [{"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _deployment(name: str, labels: dict, image: str, ports: list[dict]) -> dict:
    """A bundled component's Deployment (no args: a runtime runs the image by its name, see cluster/images.py)."""
    container = {"name": name, "image": image, "ports": ports}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"replicas": 1, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"priorityClassName": "system-cluster-critical",
                                           "serviceAccountName": name, "containers": [container]}}}}


def _service(name: str, labels: dict, ports: list[dict], kind: str = "ClusterIP") -> dict:
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"type": kind, "selector": dict(labels), "ports": ports}}


def _account(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": "kube-system"}}


def objects(profile: Profile) -> list[dict]:
    """What k3s installs, CRDs first (a kind must be served before its objects are made)."""
    crds = [_crd(group, kind, scope) for group, kind, scope in K3S_KINDS]
    rest: list[dict] = []
    if profile.has("traefik"):
        crds += [_crd(group, kind, version=version) for group, version in (("traefik.io", "v1alpha1"),
                                                                           ("traefik.containo.us", "v1alpha1"))
                 for kind in TRAEFIK_KINDS]
        labels = {"app.kubernetes.io/instance": "traefik-kube-system", "app.kubernetes.io/name": "traefik"}
        rest += [_account("traefik"),
                 _deployment("traefik", labels, TRAEFIK_IMAGE,
                             [{"name": "web", "containerPort": 8000, "protocol": "TCP"},
                              {"name": "websecure", "containerPort": 8443, "protocol": "TCP"},
                              {"name": "traefik", "containerPort": 9000, "protocol": "TCP"}]),
                 _service("traefik", labels, [{"name": "web", "port": 80, "targetPort": "web", "protocol": "TCP"},
                                              {"name": "websecure", "port": 443, "targetPort": "websecure",
                                               "protocol": "TCP"}], "LoadBalancer"),
                 {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
                  "metadata": {"name": "traefik", "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"},
                               "labels": dict(labels)},
                  "spec": {"controller": "traefik.io/ingress-controller"}}]
    if profile.has("local-storage"):
        labels = {"app": "local-path-provisioner"}
        rest += [_account("local-path-provisioner-service-account"),
                 _deployment("local-path-provisioner", labels, LOCAL_PATH_IMAGE, []),
                 {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                  "metadata": {"name": "local-path", "annotations": {DEFAULT_CLASS: "true"}},
                  "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete",
                  "volumeBindingMode": "WaitForFirstConsumer"}]
        rest[-2]["spec"]["template"]["spec"]["serviceAccountName"] = "local-path-provisioner-service-account"
    if profile.has("metrics-server"):
        labels = {"k8s-app": "metrics-server"}
        rest += [_account("metrics-server"),
                 _deployment("metrics-server", labels, METRICS_IMAGE,
                             [{"name": "https", "containerPort": 10250, "protocol": "TCP"}]),
                 _service("metrics-server", labels, [{"name": "https", "port": 443, "targetPort": "https",
                                                      "protocol": "TCP"}])]
    return crds + rest
