"""The DaemonSet controller: one pod on each node the template may run on, updated one node at a time.

As apps/v1's controller does: a node is eligible when its labels match the template's nodeSelector and
node affinity and its taints are tolerated (with the tolerations the controller adds: not-ready,
unreachable, disk, memory and PID pressure, unschedulable); each node's pod pins it with required node
affinity on metadata.name (the default scheduler binds it), is named `<set>-<5 characters>` and carries
controller-revision-hash and pod-template-generation. A pod on a node no longer eligible goes; a
RollingUpdate replaces pods of an old template up to maxUnavailable at a time (OnDelete leaves them).
Status: desired, current, ready, available, updated and misscheduled counts, observedGeneration.
"""

from __future__ import annotations

import copy
import json

from . import limits, nodes
from .workloads import Writer, create_pod, owned_by, pod_from_template, ready, suffix

COMPONENT = "daemonset-controller"
REVISION = "controller-revision-hash"
GENERATION = "pod-template-generation"
#: what the controller lets every daemon pod tolerate
TOLERATIONS = [{"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}
               for key, effect in (("not-ready", "NoExecute"), ("unreachable", "NoExecute"),
                                   ("disk-pressure", "NoSchedule"), ("memory-pressure", "NoSchedule"),
                                   ("pid-pressure", "NoSchedule"), ("unschedulable", "NoSchedule"))]


def _template(ds: dict) -> dict:
    template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
    spec = template.setdefault("spec", {})
    tolerations = list(spec.get("tolerations") or [])
    for toleration in TOLERATIONS:
        if toleration not in tolerations:
            tolerations.append(toleration)
    spec["tolerations"] = tolerations
    return template


def revision(ds: dict) -> str:
    return suffix(json.dumps((ds.get("spec") or {}).get("template") or {}, sort_keys=True), 10)


def eligible(node: dict, template: dict) -> bool:
    probe = {"metadata": {"name": ""}, "spec": template.get("spec") or {}}
    if nodes.untolerated(node, probe):
        return False
    if not nodes.selector_matches(node, probe):
        return False
    terms = ((((template.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
             .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms")
    return not terms or nodes.node_matches_terms(node, terms)


def _pin(template: dict, node: str) -> dict:
    """The template with required node affinity to one node (matchFields metadata.name), as the controller writes it."""
    pinned = copy.deepcopy(template)
    affinity = pinned.setdefault("spec", {}).setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    required["nodeSelectorTerms"] = [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]
    return pinned


def _node_of(pod: dict) -> str:
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return spec["nodeName"]
    for term in ((((spec.get("affinity") or {}).get("nodeAffinity") or {})
                  .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or []):
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return field["values"][0]
    return ""


def reconcile(writer: Writer, ds: dict) -> None:
    store, meta = writer.store, ds["metadata"]
    namespace = meta["namespace"]
    template = _template(ds)
    update = revision(ds)
    wanted = {n["metadata"]["name"] for n in store.list("nodes") if eligible(n, template)}
    pods = [p for p in store.list("pods", namespace) if owned_by(p, ds) and not p["metadata"].get("deletionTimestamp")]
    by_node: dict[str, list[dict]] = {}
    for pod in pods:
        by_node.setdefault(_node_of(pod), []).append(pod)
    for node, held in by_node.items():  # off the nodes it may not run on, and one pod per node
        extra = held if node not in wanted else sorted(held, key=lambda p: p["metadata"]["name"])[1:]
        for pod in extra:
            writer.remove("pods", namespace, pod["metadata"]["name"])
    for node in sorted(wanted - set(by_node)):
        limits.spend()
        count_key = f"ds-pods/{namespace}/{meta['uid']}"
        count = store.counters.get(count_key, 0)
        store.counters[count_key] = count + 1
        name = meta["name"] + "-" + suffix(f"{meta['uid']}/{count}", 5)
        labels = {REVISION: update, GENERATION: str(meta.get("generation", 1))}
        pod = pod_from_template(ds, _pin(template, node), name, f"{meta['name']}-", labels)
        if create_pod(writer, ds, pod, COMPONENT, "daemonsets", announce=True) is None:
            break
    _roll(writer, ds, update)
    _status(writer, ds, wanted, update)


def _roll(writer: Writer, ds: dict, update: str) -> None:
    strategy = (ds.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return
    allowed = (strategy.get("rollingUpdate") or {}).get("maxUnavailable", 1)
    pods = [p for p in writer.store.list("pods", ds["metadata"]["namespace"]) if owned_by(p, ds)]
    budget = allowed if isinstance(allowed, int) else max(1, len(pods) * int(str(allowed).rstrip("%") or 0) // 100)
    unavailable = sum(1 for p in pods if not ready(p))
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        if unavailable >= budget:
            return
        if (pod["metadata"].get("labels") or {}).get(REVISION) != update and ready(pod):
            writer.remove("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
            unavailable += 1


def _status(writer: Writer, ds: dict, wanted: set[str], update: str) -> None:
    pods = [p for p in writer.store.list("pods", ds["metadata"]["namespace"]) if owned_by(p, ds)
            and not p["metadata"].get("deletionTimestamp")]
    on_nodes = {_node_of(p) for p in pods}
    ready_pods = [p for p in pods if ready(p) and _node_of(p) in wanted]
    updated = [p for p in pods if (p["metadata"].get("labels") or {}).get(REVISION) == update]
    status = {"currentNumberScheduled": len(on_nodes & wanted), "desiredNumberScheduled": len(wanted),
              "numberMisscheduled": len(on_nodes - wanted), "numberReady": len(ready_pods),
              "numberAvailable": len(ready_pods), "observedGeneration": ds["metadata"].get("generation", 1),
              "updatedNumberScheduled": len({_node_of(p) for p in updated} & wanted)}
    unavailable = len(wanted) - len(ready_pods)
    if unavailable > 0:
        status["numberUnavailable"] = unavailable
    if not status["numberAvailable"]:
        del status["numberAvailable"]
    if status != (ds.get("status") or {}):
        changed = copy.deepcopy(ds)
        changed["status"] = status
        writer.put("daemonsets", changed, ds)
