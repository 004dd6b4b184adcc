"""Binding a new pod to the node the scheduler chose (scheduler.py), with an address; a kubelet stand-in without a runtime."""

from __future__ import annotations

import copy
import hashlib
import ipaddress

from . import nodes, recorder, rollout, scheduler, storage
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
        if ip.endswith((".0", ".255")):
            continue
        if n < POD_CIDR.num_addresses - 258:
            return ip
        if used is None:  # wrapped around: skip addresses still in use
            used = {(p.get("status") or {}).get("podIP") for p in store.list("pods")}
        if ip not in used:
            return ip


def start_pod(writer, pod: dict) -> None:
    """Schedule an unscheduled pod on a node with an address (scheduler.py; Pending with FailedScheduling when no node
    can take it); without a runtime, mark it Running and Ready."""
    status = pod.get("status") or {}
    if status.get("hostIP") or status.get("phase") not in (None, "Pending") or pod["metadata"].get("deletionTimestamp"):
        return  # placed already, finished, or going
    wanted = (pod.get("spec") or {}).get("nodeName")
    if wanted:
        node = writer.store.get("nodes", "", wanted)
        if node is None:
            return  # a node that does not exist runs nothing: the pod waits (as with a kubelet that never came)
    else:
        decision = scheduler.schedule(writer.store, pod)
        if decision.node is None:
            _unschedulable(writer, pod, decision.message(len(writer.store.list("nodes"))))
            return
        node = decision.node
    if storage.uses_claims(pod) and not storage.claims_ready(writer, pod, node["metadata"]["name"]):
        return
    spec = pod.get("spec") or {}
    node_name, node_ip = node["metadata"]["name"], nodes.node_address(node)
    now = timestamp()
    ip = _allocate_ip(writer.store)
    updated = copy.deepcopy(pod)
    updated["spec"]["nodeName"] = node_name
    if writer.live:  # scheduled; the runtime starts it and reports what happens
        updated["status"] = rollout.scheduled_status(pod, node_name, node_ip, ip, now)
        placed = writer.put("pods", updated, pod)
        recorder.record(writer, placed, "Scheduled", f"Successfully assigned {pod['metadata']['namespace']}/"
                                                     f"{pod['metadata']['name']} to {node_name}",
                        component="default-scheduler")
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


def _unschedulable(writer, pod: dict, message: str) -> None:
    """The pod stays Pending: PodScheduled False (Unschedulable) with the scheduler's message, and its event."""
    old = pod.get("status") or {}
    conditions = [c for c in old.get("conditions") or [] if c.get("type") != "PodScheduled"]
    before = next((c for c in old.get("conditions") or [] if c.get("type") == "PodScheduled"), {})
    if before.get("message") == message and old.get("phase") == "Pending":
        recorder.record(writer, pod, "FailedScheduling", message, warning=True, component="default-scheduler")
        return
    conditions.append({"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                       "lastTransitionTime": before.get("lastTransitionTime") or timestamp(), "reason": "Unschedulable",
                       "message": message})
    updated = copy.deepcopy(pod)
    updated["status"] = {"phase": "Pending", "conditions": conditions, "qosClass": rollout.qos_class(pod)}
    writer.put("pods", updated, pod)
    recorder.record(writer, pod, "FailedScheduling", message, warning=True, component="default-scheduler")
