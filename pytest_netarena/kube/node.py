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
