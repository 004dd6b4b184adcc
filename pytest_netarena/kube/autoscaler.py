"""The HorizontalPodAutoscaler controller: the target's scale read, replicas kept in bounds, metrics from a source.

The pods' usage comes from `store.metrics`, an object with `usage(namespace, pods)` returning
{pod name: {"cpu": millicores, "memory": bytes}} for the pods it has figures for, or None when there is no
metrics API at all (a cluster without metrics-server, the default here). Without metrics the controller still
does what a real one does: it resolves the target (AbleToScale, FailedGetScale), keeps the replicas within
minReplicas and maxReplicas, and reports ScalingActive False with FailedGetResourceMetric. With metrics it
computes the desired count from Resource metrics (Utilization of the pods' requests, or AverageValue).
"""

from __future__ import annotations

import copy
import math

from . import recorder
from .tables import timestamp

TOLERANCE = 0.1
TARGETS = {("apps", "Deployment"): "deployments", ("apps", "ReplicaSet"): "replicasets",
           ("apps", "StatefulSet"): "statefulsets"}
NO_METRICS_API = ("unable to fetch metrics from resource metrics API: the server could not find the requested "
                  "resource (get pods.metrics.k8s.io)")


def _condition(old: list, kind: str, status: str, reason: str, message: str, now: str) -> dict:
    kept = next((c for c in old if c.get("type") == kind), None)
    since = kept["lastTransitionTime"] if kept and kept.get("status") == status else now
    return {"type": kind, "status": status, "lastTransitionTime": since, "reason": reason, "message": message}


def _quantity(text) -> float:
    """A resource quantity as a number of base units (cores for cpu, bytes for memory)."""
    text = str(text)
    suffixes = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30,
                "Ti": 2 ** 40}
    for suffix in sorted(suffixes, key=len, reverse=True):
        if text.endswith(suffix):
            return float(text[:-len(suffix)]) * suffixes[suffix]
    return float(text)


def _requests(pod: dict, resource: str, only: str | None = None) -> float | None:
    total = 0.0
    for container in (pod.get("spec") or {}).get("containers") or []:
        if only is not None and container.get("name") != only:
            continue
        request = ((container.get("resources") or {}).get("requests") or {}).get(resource)
        if request is None:
            return None
        total += _quantity(request)
    return total


def _used(usage: dict, pod: dict, name: str, container: str | None) -> float | None:
    """A pod's usage of name, or its one container's (the source's "containers", when it breaks usage down)."""
    figures = usage.get(pod["metadata"]["name"]) or {}
    if container is not None:
        figures = (figures.get("containers") or {}).get(container) if "containers" in figures else figures
        if figures is None:
            return None
    return figures.get(name, 0)


def _resource_metric(metric: dict, pods: list[dict], usage: dict, current: int) -> tuple[int, dict]:
    """(replicas, the currentMetrics entry) of one Resource or ContainerResource metric; ValueError with the
    controller's words."""
    kind = metric.get("type", "Resource")
    field = "containerResource" if kind == "ContainerResource" else "resource"
    source = metric.get(field) or {}
    name, target = source.get("name", ""), source.get("target") or {}
    container = source.get("container") if kind == "ContainerResource" else None
    scale = 1000.0 if name == "cpu" else 1.0  # usage arrives in millicores for cpu
    ready = [p for p in pods if p["metadata"]["name"] in usage and _used(usage, p, name, container) is not None]
    if not ready:
        raise ValueError(f"failed to get {name} utilization: did not receive metrics for targeted pods (pods might "
                         "be unready)")
    used = sum(_used(usage, p, name, container) / scale for p in ready)
    if target.get("type") == "Utilization":
        requested = 0.0
        for pod in ready:
            request = _requests(pod, name, container)
            if request is None:
                holder = container or pod['spec']['containers'][0].get('name')
                raise ValueError(f"failed to get {name} utilization: missing request for {name} in container "
                                 f"{holder} of Pod {pod['metadata']['name']}")
            requested += request
        utilization = round(used / requested * 100) if requested else 0
        ratio = utilization / float(target.get("averageUtilization") or 1)
        status = {"averageUtilization": utilization, "averageValue": _format(used / len(ready), name)}
    else:
        wanted = _quantity(target.get("averageValue", "0"))
        ratio = (used / len(ready)) / wanted if wanted else 0.0
        status = {"averageValue": _format(used / len(ready), name)}
    replicas = current if abs(ratio - 1.0) <= TOLERANCE else math.ceil(ratio * len(ready))
    entry = {"name": name, "current": status} if container is None else {"name": name, "container": container,
                                                                         "current": status}
    return replicas, {"type": kind, field: entry}


def _format(value: float, resource: str) -> str:
    return f"{round(value * 1000)}m" if resource == "cpu" else str(round(value))


def reconcile(writer, hpa: dict) -> None:
    store, now = writer.store, timestamp()
    spec, old_status = hpa.get("spec") or {}, hpa.get("status") or {}
    old = old_status.get("conditions") or []
    ref = spec.get("scaleTargetRef") or {}
    namespace = hpa["metadata"]["namespace"]
    group = (ref.get("apiVersion") or "").rpartition("/")[0]
    plural = TARGETS.get((group, ref.get("kind")))
    target = store.get(plural, namespace, ref.get("name", "")) if plural else None
    status = {"currentReplicas": old_status.get("currentReplicas", 0),
              "desiredReplicas": old_status.get("desiredReplicas", 0)}
    for key in ("lastScaleTime", "currentMetrics"):
        if key in old_status:
            status[key] = old_status[key]
    if target is None:
        what = f'{plural}.{group} "{ref.get("name", "")}" not found' if plural else \
            f'no matches for kind "{ref.get("kind", "")}" in group "{group}"'
        message = f"the HPA controller was unable to get the target's current scale: {what}"
        conditions = [_condition(old, "AbleToScale", "False", "FailedGetScale", message, now)]
        conditions += [c for c in old if c.get("type") != "AbleToScale"]
        recorder.record(writer, hpa, "FailedGetScale", what, warning=True, component="horizontal-pod-autoscaler")
        _write(writer, hpa, {**status, "conditions": conditions})
        return
    current = int((target.get("spec") or {}).get("replicas", 1))
    low, high = int(spec.get("minReplicas", 1)), int(spec.get("maxReplicas", 1))
    status["currentReplicas"] = current
    active, metrics_entries, reason = _active(writer, hpa, target, current, spec, now, old)
    desired = active.pop("desired")
    if current == 0 and low != 0:
        desired, reason = 0, ""
    elif current > high:
        desired, reason = high, "Current number of replicas above Spec.MaxReplicas"
    elif current < low:
        desired, reason = low, "Current number of replicas below Spec.MinReplicas"
    limited = _condition(old, "ScalingLimited", "False", "DesiredWithinRange", "the desired count is within the "
                         "acceptable range", now)
    if current and desired > high:
        desired = high
        limited = _condition(old, "ScalingLimited", "True", "TooManyReplicas", "the desired replica count is more "
                             "than the maximum replica count", now)
    elif current and desired < low:
        desired = low
        limited = _condition(old, "ScalingLimited", "True", "TooFewReplicas", "the desired replica count is less "
                             "than the minimum replica count", now)
    if desired != current and current:
        scaled = copy.deepcopy(target)
        scaled["spec"]["replicas"] = desired
        scaled["metadata"]["generation"] = int(target["metadata"].get("generation", 1)) + 1
        writer.put(plural, scaled, target)
        status["lastScaleTime"] = now
        able = _condition(old, "AbleToScale", "True", "SucceededRescale",
                          f"the HPA controller was able to update the target scale to {desired}", now)
        recorder.record(writer, hpa, "SuccessfulRescale", f"New size: {desired}; reason: {reason}",
                        component="horizontal-pod-autoscaler")
    else:
        able = _condition(old, "AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size",
                          now) if current else _condition(old, "AbleToScale", "True", "SucceededGetScale",
                                                          "the HPA controller was able to get the target's current "
                                                          "scale", now)
    status["desiredReplicas"] = desired
    if metrics_entries:
        status["currentMetrics"] = metrics_entries
    else:
        status.pop("currentMetrics", None)
    _write(writer, hpa, {**status, "conditions": [able, active["condition"], limited]})


def _active(writer, hpa: dict, target: dict, current: int, spec: dict, now: str, old: list):
    """The ScalingActive condition and the replicas the metrics ask for (the current count when they cannot say)."""
    if current == 0:
        return ({"desired": 0, "condition": _condition(old, "ScalingActive", "False", "ScalingDisabled",
                                                        "scaling is disabled since the replica count of the target "
                                                        "is zero", now)}, [], "")
    source = getattr(writer.store, "metrics", None)
    from ..core.selectors import selector_from_dict

    chosen = selector_from_dict((target.get("spec") or {}).get("selector") or {})
    pods = [p for p in writer.store.list("pods", hpa["metadata"]["namespace"])
            if chosen.matches(p["metadata"].get("labels")) and not p["metadata"].get("deletionTimestamp")]
    try:
        usage = source.usage(hpa["metadata"]["namespace"], pods) if source is not None else None
        if usage is None:
            raise ValueError(f"failed to get cpu utilization: unable to get metrics for resource cpu: {NO_METRICS_API}")
        best, entries, names = 0, [], []
        for metric in spec.get("metrics") or []:
            if metric.get("type") not in ("Resource", "ContainerResource"):
                raise ValueError(f"unable to get metric of type {metric.get('type')}: no metrics API serves it here")
            replicas, entry = _resource_metric(metric, pods, usage, current)
            found = entry.get("resource") or entry.get("containerResource")
            best, names = max(best, replicas), names + [found["name"] + (" container" if "container" in found
                                                                         else "")]
            entries.append(entry)
    except ValueError as error:
        message = f"the HPA was unable to compute the replica count: {error}"
        recorder.record(writer, hpa, "FailedGetResourceMetric", str(error), warning=True,
                        component="horizontal-pod-autoscaler")
        return ({"desired": current, "condition": _condition(old, "ScalingActive", "False", "FailedGetResourceMetric",
                                                              message, now)}, [], "")
    what = " and ".join(f"{n} resource utilization (percentage of request)" for n in names)
    reason = f"{what} {'above' if best > current else 'below'} target" if best != current else ""
    return ({"desired": best, "condition": _condition(old, "ScalingActive", "True", "ValidMetricFound",
                                                      f"the HPA was able to successfully calculate a replica count "
                                                      f"from {what}", now)}, entries, reason)


def _write(writer, hpa: dict, status: dict) -> None:
    status = {"observedGeneration": hpa["metadata"].get("generation", 1), **status}
    if status != hpa.get("status"):
        updated = copy.deepcopy(hpa)
        updated["status"] = status
        writer.put("horizontalpodautoscalers", updated, hpa)


def process(writer, namespaces: list[str]) -> None:
    for namespace in namespaces:
        for hpa in writer.store.list("horizontalpodautoscalers", namespace):
            reconcile(writer, hpa)
