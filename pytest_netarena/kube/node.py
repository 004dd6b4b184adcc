"""The one node: its name and address, and a kubelet stand-in that schedules pods on it and gives them addresses."""

from __future__ import annotations

import copy
import hashlib
import ipaddress

from . import rollout
from .tables import timestamp

NODE_NAME = "netarena-node"
NODE_IP = "172.18.0.2"
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
    """Schedule an unscheduled pod on the node with an address; without a runtime, mark it Running and Ready."""
    status = pod.get("status") or {}
    if status.get("phase"):
        return
    spec = pod.get("spec") or {}
    if spec.get("nodeName") and spec["nodeName"] != NODE_NAME:
        return
    now = timestamp()
    ip = _allocate_ip(writer.store)
    updated = copy.deepcopy(pod)
    updated["spec"]["nodeName"] = NODE_NAME
    if writer.live:  # scheduled; the runtime starts it and reports what happens
        updated["status"] = rollout.scheduled_status(pod, NODE_NAME, NODE_IP, ip, now)
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
    updated["status"] = {"phase": "Running", "conditions": conditions, "hostIP": NODE_IP,
                         "hostIPs": [{"ip": NODE_IP}], "podIP": ip, "podIPs": [{"ip": ip}], "startTime": now,
                         "containerStatuses": containers, "qosClass": "BestEffort"}
    writer.put("pods", updated, pod)
