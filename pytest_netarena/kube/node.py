"""Placing a new pod on a node (nodes.py's eligible ones) with an address, and a kubelet stand-in without a runtime."""

from __future__ import annotations

import copy
import hashlib
import ipaddress

from . import nodes, rollout, storage
from .tables import timestamp

NODE_NAME = nodes.DEFAULT_NAME  #: the node of a cluster started without declared nodes
NODE_IP = nodes.address(0)
POD_CIDR = ipaddress.ip_network("10.244.0.0/16")


def _allocate_ip(store) -> str:
    """The next free address of the pod range, in order; after it wraps, one no pod holds."""
    used = None
    while True:
        n = store.counters.get("pod-ip", 0)
        store.counters["pod-ip"] = n + 1
        offset = n % (POD_CIDR.num_addresses - 258) + 2
        ip = str(POD_CIDR.network_address + offset)
        if ip.endswith(".0") or ip.endswith(".255"):
            continue
        if n < POD_CIDR.num_addresses - 258:
            return ip
        if used is None:  # wrapped around: skip addresses still in use
            used = {(p.get("status") or {}).get("podIP") for p in store.list("pods")}
        if ip not in used:
            return ip


def choose_node(store, pod: dict) -> dict | None:
    """The node a new pod goes to: the one it names, else the eligible node (nodes.eligible: ready, not cordoned,
    taints tolerated, nodeSelector matched) with the fewest pods; None leaves it Pending. A scheduler that weighs
    resources and affinity replaces this choice."""
    wanted = (pod.get("spec") or {}).get("nodeName")
    if wanted:
        return store.get("nodes", "", wanted)
    claims = storage.uses_claims(pod)
    fitting = [n for n in store.list("nodes") if nodes.eligible(n, pod)
               and (not claims or storage.node_allows(store, pod, n))]
    if len(fitting) <= 1:
        return fitting[0] if fitting else None
    load = {n["metadata"]["name"]: 0 for n in fitting}
    for other in store.list("pods", ordered=False):
        name = (other.get("spec") or {}).get("nodeName")
        if name in load:
            load[name] += 1
    return min(fitting, key=lambda n: (load[n["metadata"]["name"]], n["metadata"]["name"]))


def start_pod(writer, pod: dict) -> None:
    """Schedule an unscheduled pod on a node with an address; without a runtime, mark it Running and Ready."""
    status = pod.get("status") or {}
    if status.get("hostIP") or status.get("phase") not in (None, "Pending") or pod["metadata"].get("deletionTimestamp"):
        return  # placed already, finished, or going
    node = choose_node(writer.store, pod)
    if node is None or (storage.uses_claims(pod) and not storage.claims_ready(writer, pod, node["metadata"]["name"])):
        _unschedulable(writer, pod)
        return
    spec = pod.get("spec") or {}
    node_name, node_ip = node["metadata"]["name"], nodes.node_address(node)
    now = timestamp()
    ip = _allocate_ip(writer.store)
    updated = copy.deepcopy(pod)
    updated["spec"]["nodeName"] = node_name
    if writer.live:  # scheduled; the runtime starts it and reports what happens
        updated["status"] = rollout.scheduled_status(pod, node_name, node_ip, ip, now)
        writer.put("pods", updated, pod)
        return
    conditions = [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
                  for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    containers = []
    for c in spec.get("containers") or []:
        containers.append({"name": c.get("name"), "image": c.get("image"), "imageID": "",
                           "containerID": "containerd://" + hashlib.sha256(
                               (pod["metadata"]["uid"] + str(c.get("name"))).encode()).hexdigest(),
                           "ready": True, "started": True, "restartCount": 0, "lastState": {},
                           "state": {"running": {"startedAt": now}}})
    updated["status"] = {"phase": "Running", "conditions": conditions, "hostIP": node_ip,
                         "hostIPs": [{"ip": node_ip}], "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
                         "containerStatuses": containers, "qosClass": "BestEffort"}
    writer.put("pods", updated, pod)


def why_unschedulable(store, pod: dict) -> str:
    """The scheduler's words for why no node takes pod: a claim it lacks, else each node's reason, counted."""
    namespace = pod["metadata"].get("namespace", "")
    all_nodes = store.list("nodes")
    total = len(all_nodes)

    def said(text: str) -> str:
        return (f"0/{total} nodes are available: {text}. preemption: 0/{total} nodes are available: {total} "
                "Preemption is not helpful for scheduling.")

    for volume in (pod.get("spec") or {}).get("volumes") or []:
        claim_name = ((volume or {}).get("persistentVolumeClaim") or {}).get("claimName")
        if claim_name is None:
            continue
        claim = store.get("persistentvolumeclaims", namespace, claim_name)
        if claim is None:
            return said(f'persistentvolumeclaim "{claim_name}" not found')
        if claim["metadata"].get("deletionTimestamp"):
            return said(f'persistentvolumeclaim "{claim_name}" is being deleted')
    reasons: dict[str, int] = {}
    for node in all_nodes:
        taints = nodes.untolerated(node, pod)
        if not nodes.ready(node):
            reason = "node(s) had untolerated taint {node.kubernetes.io/not-ready: }"
        elif (node.get("spec") or {}).get("unschedulable"):
            reason = "node(s) were unschedulable"
        elif taints:
            reason = f"node(s) had untolerated taint {{{taints[0].get('key')}: {taints[0].get('value', '')}}}"
        elif not nodes.selector_matches(node, pod):
            reason = "node(s) didn't match Pod's node affinity/selector"
        elif storage.uses_claims(pod) and not storage.node_allows(store, pod, node):
            reason = "node(s) had volume node affinity conflict"
        else:
            reason = "pod has unbound immediate PersistentVolumeClaims"
        reasons[reason] = reasons.get(reason, 0) + 1
    return said(", ".join(sorted(f"{n} {r}" if r.startswith("node") else r for r, n in reasons.items())))


def _unschedulable(writer, pod: dict) -> None:
    """Report a pod no node takes as the scheduler does: Pending, PodScheduled False, a FailedScheduling event."""
    from . import recorder

    message = why_unschedulable(writer.store, pod)
    status = pod.get("status") or {}
    old = next((c for c in status.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    if status.get("phase") == "Pending" and old.get("message") == message:
        return
    updated = copy.deepcopy(pod)
    updated["status"] = {"phase": "Pending", "qosClass": rollout.qos_class(pod), "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
         "lastProbeTime": None, "lastTransitionTime": old.get("lastTransitionTime") or timestamp()}]}
    writer.put("pods", updated, pod)
    recorder.record(writer, pod, "FailedScheduling", message, warning=True, component="default-scheduler")
