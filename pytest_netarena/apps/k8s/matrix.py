"""The connectivity matrix (client workload -> service port) of a set of cluster objects, via the netpol engine.

`MatrixChecker.sync()` takes the objects as the API returns them (dicts) and updates the engine
incrementally: a changed policy touches only the probes of the pods it selects, and only the flows
of the probes whose verdict changed are recomputed; a change to pods, services or namespaces
rebuilds the model (rare: every such change is a safety violation anyway).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import compress
from operator import ne
from typing import Any

from .workloads.model import AppSpec, Flow

Matrix = dict[Flow, bool]


def workload_of(pod: Mapping[str, Any]) -> str | None:
    """The Deployment a pod belongs to (through its ReplicaSet owner), or None for a bare pod."""
    for owner in pod.get("metadata", {}).get("ownerReferences") or ():
        if owner.get("kind") == "ReplicaSet":
            return owner.get("name", "").rsplit("-", 1)[0] or None
        if owner.get("kind") == "Deployment":
            return owner.get("name")
    return None


def _fingerprint(objects: Iterable[Mapping[str, Any]]) -> tuple:
    return tuple(sorted(
        (o["metadata"].get("namespace", ""), o["metadata"]["name"], o["metadata"].get("uid", ""),
         o["metadata"].get("resourceVersion", id(o)))
        for o in objects))


def _engine_pod(pod: Mapping[str, Any], namespace: str):
    from ...netpol import ContainerPort, Pod

    ports = []
    for container in pod.get("spec", {}).get("containers") or ():
        for port in container.get("ports") or ():
            ports.append(ContainerPort(int(port["containerPort"]), port.get("protocol") or "TCP", port.get("name")))
    meta = pod["metadata"]
    return Pod(meta.get("namespace") or namespace, meta["name"], dict(meta.get("labels") or {}),
               (pod.get("status") or {}).get("podIP"), tuple(ports))


def _engine_service(service: Mapping[str, Any], namespace: str):
    from ...netpol import Service, ServicePort

    spec = service.get("spec") or {}
    ports = tuple(ServicePort.of(p) for p in spec.get("ports") or ())
    meta = service["metadata"]
    return Service(meta.get("namespace") or namespace, meta["name"], dict(spec.get("selector") or {}), ports)


def _engine_namespace(namespace: Mapping[str, Any]):
    from ...netpol import Namespace

    meta = namespace["metadata"]
    return Namespace(meta["name"], dict(meta.get("labels") or {}))


def _with_namespace(policy: Mapping[str, Any], namespace: str) -> Mapping[str, Any]:
    if policy.get("metadata", {}).get("namespace"):
        return policy
    return {**policy, "metadata": {**policy.get("metadata", {}), "namespace": namespace}}


class MatrixChecker:
    """Holds an engine model of one namespace's app and answers the full matrix quickly."""

    def __init__(self, app: AppSpec, namespace: str) -> None:
        self.app = app
        self.namespace = namespace
        self.flows = app.flows()
        self._structure: tuple | None = None
        self._policies: dict[str, Any] = {}
        self._model = None
        self._view = None
        self._probes: dict[Flow, list] = {}
        self._flow_of: dict[Any, Flow] = {}  #: probe -> its flow
        self._matrix: Matrix = {}
        #: flows whose verdict the last sync() changed (None: the model was rebuilt, any may have)
        self.last_changed: set[Flow] | None = None

    def sync(self, pods: list[dict], services: list[dict], policies: list[dict],
             namespaces: list[dict] = ()) -> None:
        """Bring the model to these objects (all of the app's namespace; namespaces: cluster-wide)."""
        from ...netpol import ConnectivityModel, Probe

        structure = (_fingerprint(pods), _fingerprint(services), _fingerprint(namespaces))
        if structure != self._structure or self._model is None:
            model = ConnectivityModel(
                namespaces=[_engine_namespace(ns) for ns in namespaces],
                pods=[_engine_pod(pod, self.namespace) for pod in pods],
                services=[_engine_service(svc, self.namespace) for svc in services],
                listening_ports=True,  # a targetPort no container declares reaches nothing, as on a cluster
            )
            self._policies = {}
            sources: dict[str, list[str]] = {}
            for pod in pods:
                workload = workload_of(pod)
                if workload is not None:
                    sources.setdefault(workload, []).append(f"{pod['metadata'].get('namespace') or self.namespace}/"
                                                            f"{pod['metadata']['name']}")
            service_names = {svc["metadata"]["name"] for svc in services}
            self._probes = {}
            for flow in self.flows:
                if flow.service in service_names:
                    self._probes[flow] = [Probe.to_svc(src, f"{self.namespace}/{flow.service}", flow.port, flow.protocol)
                                          for src in sources.get(flow.source, ())]
                else:
                    self._probes[flow] = []
            self._flow_of = {probe: flow for flow, probes in self._probes.items() for probe in probes}
            self._model = model
            self._structure = structure
            self._apply_policies(policies)
            self._view = model.watch(list(self._flow_of))
            self._matrix = {flow: self._verdict(probes) for flow, probes in self._probes.items()}
            self.last_changed = None
        else:
            self._apply_policies(policies)
            changed = self._view.refresh()
            self.last_changed = {self._flow_of[probe] for probe in changed}
            for flow in self.last_changed:
                self._matrix[flow] = self._verdict(self._probes[flow])

    def _verdict(self, probes: list) -> bool:
        results = self._view.results
        if len(probes) == 1:
            return results[probes[0]]
        return bool(probes) and all(results[probe] for probe in probes)

    def _apply_policies(self, policies: list[dict]) -> None:
        wanted: dict[str, Mapping[str, Any]] = {}
        for policy in policies:
            policy = _with_namespace(policy, self.namespace)
            wanted[f"{policy['metadata']['namespace']}/{policy['metadata']['name']}"] = policy
        for key in [key for key in self._policies if key not in wanted]:
            self._model.remove_policy(key)
            del self._policies[key]
        for key, policy in wanted.items():
            version = policy["metadata"].get("resourceVersion")
            previous = self._policies.get(key)
            if previous is not None and version is not None and previous[0] == version:
                continue
            if previous is not None and version is None and previous[1] == policy:
                continue
            self._model.set_policy(policy)
            self._policies[key] = (version, policy)

    @property
    def model(self):
        """The engine model (netpol.ConnectivityModel) of the last sync(), or None before the first."""
        return self._model

    def view(self) -> Matrix:
        """The current matrix itself, no copy: read it before the next sync(), never change it."""
        return self._matrix

    def matrix(self) -> Matrix:
        """Flow -> reachable: every pod of the source workload reaches the service port (False if it has none).

        A new dict each call (in the order of app.flows()), kept current by sync()."""
        return dict(self._matrix)

    def explain(self, flow: Flow) -> str:
        probes = self._probes.get(flow) or []
        if not probes:
            return f"{flow}: no pod of {flow.source} or no service {flow.service}"
        return str(self._model.explain(probes[0]))


def synthetic_objects(app: AppSpec, namespace: str) -> tuple[list[dict], list[dict]]:
    """Pods and Services for `app` as a controller would create them (used to compute matrices offline)."""
    pods, services = [], []
    for index, workload in enumerate(app.workloads):
        pods.append({
            "metadata": {"name": f"{workload.name}-0", "namespace": namespace, "labels": {"app": workload.name},
                         "ownerReferences": [{"kind": "ReplicaSet", "name": f"{workload.name}-0"}],
                         "uid": f"pod-{index}", "resourceVersion": "1"},
            "spec": {"containers": [{"name": workload.container, "ports": [
                _container_port(workload, port, protocol) for port, protocol in workload.container_ports]}]},
            "status": {"podIP": f"10.{index // 65536 % 256}.{index // 256 % 256}.{index % 256 + 1}"},
        })
        if workload.has_service:
            services.append({
                "metadata": {"name": workload.name, "namespace": namespace, "uid": f"svc-{index}", "resourceVersion": "1"},
                "spec": {"selector": {"app": workload.name}, "ports": [
                    {"port": p.port, "targetPort": p.target_port, "protocol": p.protocol} for p in workload.service_ports]},
            })
    return pods, services


def _container_port(workload, port: int, protocol: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"containerPort": port, "protocol": protocol}
    name = workload.port_name(port, protocol)
    if name:
        entry["name"] = name
    return entry


class OfflineMatrix:
    """Matrices of an app under arbitrary policy sets, without a cluster (fault generation, oracles)."""

    NAMESPACE = "default"

    def __init__(self, app: AppSpec) -> None:
        self.app = app
        self.checker = MatrixChecker(app, self.NAMESPACE)
        self.pods, self.services = synthetic_objects(app, self.NAMESPACE)
        self.namespaces = [{"metadata": {"name": self.NAMESPACE, "uid": "ns", "resourceVersion": "1"}}]

    def matrix(self, policies: Mapping[str, dict]) -> Matrix:
        self.checker.sync(self.pods, self.services, list(policies.values()), self.namespaces)
        return self.checker.matrix()


def intended_matrix(app: AppSpec) -> Matrix:
    """The intent: the matrix the healthy policies produce."""
    return dict(_intent_cache(app))


_INTENTS: dict[int, tuple[AppSpec, Matrix]] = {}


def _intent_cache(app: AppSpec) -> Matrix:
    entry = _INTENTS.get(id(app))
    if entry is None or entry[0] is not app:
        entry = _INTENTS[id(app)] = (app, OfflineMatrix(app).matrix(app.healthy_policies()))
    return entry[1]


def aligned(first: Matrix, *others: Matrix) -> bool:
    """Whether the matrices have the same flows in the same order (then they can be zipped)."""
    keys = list(first)
    # List equality checks identity first: matrices of one app share their Flow objects (app.flows()).
    return all(len(other) == len(keys) and list(other) == keys for other in others)


def mismatches(intent: Matrix, actual: Matrix) -> list[Flow]:
    if aligned(intent, actual):
        return list(compress(intent, map(ne, intent.values(), actual.values())))
    return [flow for flow, expected in intent.items() if actual.get(flow) != expected]
