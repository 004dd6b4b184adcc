"""When a runtime runs the pods: pods wait for it after scheduling, and Deployments roll out keeping availability.

A new pod is scheduled (Pending, with its address) and waits for the runtime to report its containers;
a Deployment rolls out as a real one does, keeping old pods until new ones are available. Without a runtime (`Cluster.live_pods` False) the controllers mark every pod Running and Ready at once
and replace old ReplicaSets in one step, as before; nothing here runs.
"""

from __future__ import annotations

import math


def scheduled_status(pod: dict, node_name: str, node_ip: str, address: str, now: str) -> dict:
    """The status a pod has once the scheduler bound it and before its containers run."""
    containers = [{"name": c.get("name"), "image": c.get("image"), "imageID": "", "ready": False, "started": False,
                   "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}
                  for c in (pod.get("spec") or {}).get("containers") or []]
    waiting = ", ".join(f"[{c['name']}]" for c in containers)
    not_ready = {"status": "False", "reason": "ContainersNotReady", "lastProbeTime": None, "lastTransitionTime": now,
                 "message": f"containers with unready status: {waiting}"}
    conditions = [
        {"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": None, "lastTransitionTime": now},
        {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": now},
        {"type": "Ready", **not_ready}, {"type": "ContainersReady", **not_ready},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now}]
    return {"phase": "Pending", "conditions": conditions, "hostIP": node_ip, "hostIPs": [{"ip": node_ip}],
            "podIP": address, "podIPs": [{"ip": address}], "startTime": now, "containerStatuses": containers,
            "qosClass": qos_class(pod)}


def qos_class(pod: dict) -> str:
    containers = (pod.get("spec") or {}).get("containers") or []
    resources = [c.get("resources") or {} for c in containers]
    if not any(r.get("requests") or r.get("limits") for r in resources):
        return "BestEffort"
    guaranteed = all((r.get("limits") or {}).get(k) and (r.get("requests") or r.get("limits") or {}).get(k)
                     == (r.get("limits") or {}).get(k) for r in resources for k in ("cpu", "memory"))
    return "Guaranteed" if guaranteed else "Burstable"


def _amount(value, replicas: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        share = replicas * int(value[:-1] or 0) / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value) if isinstance(value, (int, str)) and str(value).isdigit() else 0


def surge_and_unavailable(spec: dict, replicas: int) -> tuple[int, int]:
    """maxSurge and maxUnavailable of a RollingUpdate (25% each by default; never both 0)."""
    rolling = ((spec.get("strategy") or {}).get("rollingUpdate") or {})
    surge = _amount(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = _amount(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def new_replicas(spec: dict, replicas: int, new_current: int, old_total: int) -> int:
    """How many pods the new ReplicaSet may have now: all once the old ones are gone, else up to the surge."""
    if (spec.get("strategy") or {}).get("type") == "Recreate":
        return replicas if old_total == 0 else 0
    if old_total == 0:
        return replicas
    surge, _ = surge_and_unavailable(spec, replicas)
    return max(new_current, min(replicas, replicas + surge - old_total))


def old_scale_down(spec: dict, replicas: int, new_wanted: int, new_ready: int, old: list[dict]) -> dict[str, int]:
    """The replicas each old ReplicaSet keeps (by name), oldest scaled down first, never below availability."""
    if (spec.get("strategy") or {}).get("type") == "Recreate":
        return {rs["metadata"]["name"]: 0 for rs in old}
    _, unavailable = surge_and_unavailable(spec, replicas)
    old_ready = sum((rs.get("status") or {}).get("readyReplicas", 0) for rs in old)
    old_total = sum((rs.get("spec") or {}).get("replicas", 0) for rs in old)
    min_available = replicas - unavailable
    # the deployment controller's rule: never take the pods below minAvailable, counting the new ones not ready
    most = old_total + new_wanted - min_available - (new_wanted - new_ready)
    if most <= 0:
        return {rs["metadata"]["name"]: (rs.get("spec") or {}).get("replicas", 0) for rs in old}
    unhealthy = min(most, max(0, old_total - old_ready))  # old pods that are not ready go first
    removable = unhealthy + max(0, min(most - unhealthy, old_ready + new_ready - min_available))
    kept: dict[str, int] = {}
    for rs in sorted(old, key=lambda r: r["metadata"].get("creationTimestamp", "")):
        count = (rs.get("spec") or {}).get("replicas", 0)
        cut = min(count, removable)
        removable -= cut
        kept[rs["metadata"]["name"]] = count - cut
    return kept


def available(spec: dict, replicas: int, ready: int) -> bool:
    """A Deployment is Available when at most maxUnavailable of its replicas are not ready."""
    _, unavailable = surge_and_unavailable(spec, replicas)
    return ready >= replicas - unavailable


def unavailable_condition(old: list, now: str) -> dict:
    previous = next((c for c in old if c.get("type") == "Available"), None)
    if previous and previous.get("status") == "False":
        return previous
    return {"type": "Available", "status": "False", "lastUpdateTime": now, "lastTransitionTime": now,
            "reason": "MinimumReplicasUnavailable", "message": "Deployment does not have minimum availability."}
