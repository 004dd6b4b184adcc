"""The node model: the nodes a cluster is started with, their Node and Lease objects, and what fits on one.

A node is declared by whoever starts the cluster (`netarena kube serve --node`, a Harbor task's k3s services,
`EmbeddedAPIServer(nodes=...)`) as a NodeSpec: name, labels, taints, capacity, role. This module makes its Node
object (labels, taints, capacity and allocatable, the four kubelet conditions, addresses) and its Lease in
kube-node-lease, and answers the questions a scheduler asks of a node: is it ready and schedulable, do its taints
let a pod on, does the pod's nodeSelector match it (`eligible`), and what its pods already request. The scheduler
that chooses among eligible nodes (resources, affinity, spreading, FailedScheduling events) builds on these.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from .tables import timestamp

DEFAULT_NAME = "netarena-node"
FIRST_ADDRESS = (172, 18, 0, 2)
CAPACITY = {"cpu": "8", "ephemeral-storage": "100Gi", "memory": "32Gi", "pods": "1100"}
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>\w+)$")


@dataclass
class NodeSpec:
    """One declared node; capacity entries given replace the defaults (CAPACITY), allocatable follows capacity."""

    name: str
    labels: dict[str, str] = field(default_factory=dict)
    taints: list[dict] = field(default_factory=list)
    capacity: dict[str, str] = field(default_factory=dict)
    control_plane: bool = False
    unschedulable: bool = False

    def full_capacity(self) -> dict[str, str]:
        return {**CAPACITY, **self.capacity}


def parse_taint(text: str) -> dict:
    """`key=value:Effect` or `key:Effect` (kubectl taint's and k3s --node-taint's form); ValueError otherwise."""
    match = _TAINT.match(text.strip())
    if match is None or match.group("effect") not in EFFECTS:
        raise ValueError(f"invalid taint {text!r}: expected key[=value]:Effect, Effect one of {', '.join(EFFECTS)}")
    taint = {"key": match.group("key"), "effect": match.group("effect")}
    if match.group("value"):
        taint["value"] = match.group("value")
    return taint


def parse_label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"invalid label {text!r}: expected key=value")
    return key, value


def parse_option(text: str) -> NodeSpec:
    """A `--node` value: NAME[,label=K=V][,taint=K=V:Effect][,cpu=N][,memory=Q][,pods=N][,role=control-plane]."""
    name, *parts = [p.strip() for p in text.split(",")]
    if not name or not re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", name):
        raise ValueError(f"invalid node name {name!r}: a lowercase RFC 1123 subdomain is needed")
    spec = NodeSpec(name)
    for part in parts:
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"invalid node option {part!r} in {text!r}")
        if key == "label":
            k, v = parse_label(value)
            spec.labels[k] = v
        elif key == "taint":
            spec.taints.append(parse_taint(value))
        elif key in ("cpu", "memory", "pods", "ephemeral-storage"):
            spec.capacity[key] = value
        elif key == "role" and value in ("control-plane", "worker"):
            spec.control_plane = value == "control-plane"
        else:
            raise ValueError(f"invalid node option {part!r} in {text!r}")
    return spec


def default_nodes() -> list[NodeSpec]:
    return [NodeSpec(DEFAULT_NAME, control_plane=True)]


def address(index: int) -> str:
    a, b, c, d = FIRST_ADDRESS
    return f"{a}.{b}.{c + (d + index) // 256}.{(d + index) % 256}"


def pod_cidr(index: int, count: int) -> str:
    return "10.244.0.0/16" if count == 1 else f"10.244.{index}.0/24"


def node_object(spec: NodeSpec, index: int, count: int, minor: int | None, k3s: bool = False) -> dict:
    """The Node a kubelet registers for spec (k3s's labels and provider id when k3s)."""
    version = f"v1.{minor}.0" if minor else "v1.37.0"
    labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "kubernetes.io/hostname": spec.name, "kubernetes.io/os": "linux"}
    if k3s:
        labels.update({"beta.kubernetes.io/instance-type": "k3s", "node.kubernetes.io/instance-type": "k3s"})
        version += "+k3s1"
    if spec.control_plane:
        labels["node-role.kubernetes.io/control-plane"] = "true" if k3s else ""
        if k3s:
            labels["node-role.kubernetes.io/master"] = "true"
    labels.update(spec.labels)
    cidr = pod_cidr(index, count)
    node_spec: dict = {"podCIDR": cidr, "podCIDRs": [cidr]}
    if k3s:
        node_spec["providerID"] = f"k3s://{spec.name}"
    taints = [copy.deepcopy(t) for t in spec.taints]
    if spec.unschedulable:
        node_spec["unschedulable"] = True
        taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"})
    if taints:
        node_spec["taints"] = taints
    capacity = spec.full_capacity()
    now = timestamp()
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": spec.name, "labels": labels,
                     "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"}},
        "spec": node_spec,
        "status": {
            "addresses": [{"type": "InternalIP", "address": address(index)}, {"type": "Hostname", "address": spec.name}],
            "allocatable": dict(capacity), "capacity": dict(capacity),
            "conditions": conditions(now),
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://2.0.0",
                         "kernelVersion": "6.1.0", "kubeProxyVersion": version, "kubeletVersion": version,
                         "machineID": "", "operatingSystem": "linux",
                         "osImage": "K3s" if k3s else "netarena embedded node", "systemUUID": ""}}}


def conditions(now: str, ready: bool = True) -> list[dict]:
    """The kubelet's four conditions, as `kubectl describe node` lists them."""
    def condition(kind: str, status: str, reason: str, message: str) -> dict:
        return {"type": kind, "status": status, "lastHeartbeatTime": now, "lastTransitionTime": now,
                "reason": reason, "message": message}

    return [condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            condition("Ready", "True", "KubeletReady", "kubelet is posting ready status") if ready else
            condition("Ready", "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.")]


def lease_object(node: dict, now_micro: str) -> dict:
    """The node's heartbeat Lease in kube-node-lease, owned by the Node."""
    name = node["metadata"]["name"]
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "namespace": LEASE_NAMESPACE,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name,
                                              "uid": node["metadata"].get("uid", "")}]},
            "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": now_micro}}


def micro_timestamp() -> str:
    import datetime as dt

    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- what a scheduler asks of a node --------------------------------------------------------------------------
def ready(node: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (node.get("status") or {}).get("conditions") or [])


def tolerates(tolerations: list, taint: dict) -> bool:
    """A pod's tolerations let it past one taint (the scheduler's and the kubelet's rule)."""
    for toleration in tolerations or []:
        if not isinstance(toleration, dict):
            continue
        if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
            continue
        operator = toleration.get("operator") or "Equal"
        if not toleration.get("key"):
            if operator == "Exists":
                return True
            continue
        if toleration["key"] != taint.get("key"):
            continue
        if operator == "Exists" or toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def untolerated(node: dict, pod: dict, effects=("NoSchedule", "NoExecute")) -> list[dict]:
    """The node's taints of these effects the pod does not tolerate."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    return [t for t in (node.get("spec") or {}).get("taints") or []
            if isinstance(t, dict) and t.get("effect") in effects and not tolerates(tolerations, t)]


def selector_matches(node: dict, pod: dict) -> bool:
    wanted = (pod.get("spec") or {}).get("nodeSelector") or {}
    labels = node["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in wanted.items())


def _expression_matches(labels: dict, expr: dict) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator"), expr.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and values:
        try:
            return int(labels[key]) > int(values[0]) if op == "Gt" else int(labels[key]) < int(values[0])
        except ValueError:
            return False
    return False


def node_matches_terms(node: dict, terms: list) -> bool:
    """A node selector's terms (ORed; each term's expressions ANDed) hold for node (labels and metadata.name)."""
    labels = node["metadata"].get("labels") or {}
    for term in terms:
        if not isinstance(term, dict):
            continue
        exprs = term.get("matchExpressions") or []
        fields = term.get("matchFields") or []
        if not exprs and not fields:
            continue
        if all(_expression_matches(labels, e) for e in exprs) and all(
                _expression_matches({"metadata.name": node["metadata"]["name"]}, f) for f in fields):
            return True
    return False


def eligible(node: dict, pod: dict) -> bool:
    """The node may take the pod as far as readiness, cordon, taints and nodeSelector go."""
    if not ready(node) or (node.get("spec") or {}).get("unschedulable"):
        return False
    return selector_matches(node, pod) and not untolerated(node, pod)


def node_address(node: dict) -> str:
    for entry in (node.get("status") or {}).get("addresses") or []:
        if entry.get("type") == "InternalIP":
            return entry.get("address", "")
    return ""


def cordon_taint(node: dict) -> dict:
    """node with the unschedulable taint added or removed to follow spec.unschedulable (the node lifecycle
    controller's work), in place."""
    spec = node.setdefault("spec", {})
    current = [t for t in spec.get("taints") or [] if isinstance(t, dict) and t.get("key") == UNSCHEDULABLE_TAINT]
    taints = [t for t in spec.get("taints") or [] if not (isinstance(t, dict) and t.get("key") == UNSCHEDULABLE_TAINT)]
    if spec.get("unschedulable"):
        taints.append(current[0] if current else {"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule",
                                                  "timeAdded": timestamp()})
    if taints:
        spec["taints"] = taints
    else:
        spec.pop("taints", None)
    return node
