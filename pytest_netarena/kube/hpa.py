"""HorizontalPodAutoscaler (autoscaling/v2, and v1 converted): defaults, validation and the v1 form."""

from __future__ import annotations

import copy

from .validation import Cause, bad_value, required, unsupported

SOURCES = ("ContainerResource", "External", "Object", "Pods", "Resource")
SOURCE_FIELD = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods", "Object": "object",
                "External": "external"}
TARGET_TYPES = ("AverageValue", "Utilization", "Value")
DEFAULT_CPU = {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization",
                                                                          "averageUtilization": 80}}}
SCALE_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
            "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                         {"type": "Percent", "value": 100, "periodSeconds": 15}]}
SCALE_DOWN = {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
              "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def apply_defaults(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [copy.deepcopy(DEFAULT_CPU)]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):  # only a behavior that is given is completed, as the real defaults do
        for key, rules in (("scaleUp", SCALE_UP), ("scaleDown", SCALE_DOWN)):
            given = behavior.setdefault(key, {})
            if isinstance(given, dict):
                for field, value in rules.items():
                    given.setdefault(field, copy.deepcopy(value))


def _target(target, where: str, kind: str) -> list[Cause]:
    if not isinstance(target, dict):
        return [required(where, "must specify a metric target")]
    causes: list[Cause] = []
    kind_of = target.get("type")
    if not kind_of:
        causes.append(required(f"{where}.type", "must specify a metric target type"))
    elif kind_of not in TARGET_TYPES:
        causes.append(bad_value(f"{where}.type", kind_of, "must be either Utilization, Value, or AverageValue"))
    utilization = target.get("averageUtilization")
    if utilization is not None and (not isinstance(utilization, int) or utilization < 1):
        causes.append(bad_value(f"{where}.averageUtilization", utilization, "must be greater than 0"))
    if kind_of == "Utilization" and utilization is None:
        causes.append(required(f"{where}.averageUtilization", "must set either a target raw value or a target "
                               "utilization"))
    if kind_of == "AverageValue" and target.get("averageValue") is None:
        causes.append(required(f"{where}.averageValue", "must set either a target raw value or a target "
                               "utilization"))
    if kind_of == "Value" and target.get("value") is None:
        causes.append(required(f"{where}.value", "must set either a target raw value or a target utilization"))
    if kind_of == "Value" and kind in ("Resource", "ContainerResource"):
        causes.append(bad_value(f"{where}.type", kind_of, "must be either Utilization or AverageValue"))
    return causes


def _metric(metric, where: str) -> list[Cause]:
    if not isinstance(metric, dict):
        return [bad_value(where, metric, "must be an object")]
    kind = metric.get("type")
    if not kind:
        return [required(f"{where}.type", "must specify a metric source type")]
    if kind not in SOURCES:
        return [unsupported(f"{where}.type", kind, SOURCES)]
    field = SOURCE_FIELD[kind]
    source = metric.get(field)
    others = [f for f in SOURCE_FIELD.values() if f != field and metric.get(f) is not None]
    causes: list[Cause] = []
    for other in others:
        causes.append(bad_value(f"{where}.{other}", "", "must populate the given metric source only"))
    if not isinstance(source, dict):
        return causes + [required(f"{where}.{field}", "must populate information for the given metric source")]
    if kind in ("Resource", "ContainerResource"):
        if not source.get("name"):
            causes.append(required(f"{where}.{field}.name", "must specify a resource name"))
        if kind == "ContainerResource" and not source.get("container"):
            causes.append(required(f"{where}.{field}.container", "must specify a container"))
    else:
        if not (source.get("metric") or {}).get("name"):
            causes.append(required(f"{where}.{field}.metric.name", "must specify a metric name"))
        if kind == "Object" and not (source.get("describedObject") or {}).get("name"):
            causes.append(required(f"{where}.{field}.describedObject.name"))
    return causes + _target(source.get("target"), f"{where}.{field}.target", kind)


def validate(obj: dict) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    ref = spec.get("scaleTargetRef") if isinstance(spec.get("scaleTargetRef"), dict) else {}
    if not ref.get("kind"):
        causes.append(required("spec.scaleTargetRef.kind"))
    elif "/" in ref["kind"] or "%" in ref["kind"]:
        causes.append(bad_value("spec.scaleTargetRef.kind", ref["kind"], "may not contain '/'"))
    if not ref.get("name"):
        causes.append(required("spec.scaleTargetRef.name"))
    elif "/" in ref["name"] or "%" in ref["name"]:
        causes.append(bad_value("spec.scaleTargetRef.name", ref["name"], "may not contain '/'"))
    low, high = spec.get("minReplicas"), spec.get("maxReplicas")
    if isinstance(low, int) and low < 1:
        causes.append(bad_value("spec.minReplicas", low, "must be greater than or equal to 1"))
    if not isinstance(high, int) or high < 1:
        causes.append(bad_value("spec.maxReplicas", high if high is not None else 0, "must be greater than 0"))
    elif isinstance(low, int) and high < low:
        causes.append(bad_value("spec.maxReplicas", high, "must be greater than or equal to `minReplicas`"))
    for i, metric in enumerate(spec.get("metrics") or []):
        causes += _metric(metric, f"spec.metrics[{i}]")
    return causes


def validate_update(old: dict, new: dict) -> list[Cause]:
    return []


# -- autoscaling/v1, the form older clients read ---------------------------------------------------------------
def _cpu_utilization(metrics) -> int | None:
    for metric in metrics or []:
        resource = (metric or {}).get("resource") or {}
        target = resource.get("target") or {}
        if metric.get("type") == "Resource" and resource.get("name") == "cpu" and target.get("type") == "Utilization":
            return target.get("averageUtilization")
    return None


def v2_to_v1(obj: dict) -> dict:
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = "autoscaling/v1"
    spec = obj.get("spec") or {}
    v1_spec = {k: copy.deepcopy(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    cpu = _cpu_utilization(spec.get("metrics"))
    if cpu is not None:
        v1_spec["targetCPUUtilizationPercentage"] = cpu
    out["spec"] = v1_spec
    if "status" in obj:
        status = obj["status"] or {}
        v1_status = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                            "desiredReplicas") if k in status}
        v1_status.setdefault("currentReplicas", 0)
        v1_status.setdefault("desiredReplicas", 0)
        for metric in status.get("currentMetrics") or []:
            current = ((metric or {}).get("resource") or {})
            if current.get("name") == "cpu" and (current.get("current") or {}).get("averageUtilization") is not None:
                v1_status["currentCPUUtilizationPercentage"] = current["current"]["averageUtilization"]
        out["status"] = v1_status
    return out


def v1_to_v2(obj: dict) -> dict:
    out = {k: copy.deepcopy(v) for k, v in obj.items() if k not in ("spec", "status")}
    out["apiVersion"] = "autoscaling/v2"
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    v2_spec = {k: copy.deepcopy(spec[k]) for k in ("scaleTargetRef", "minReplicas", "maxReplicas") if k in spec}
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metric = copy.deepcopy(DEFAULT_CPU)
        metric["resource"]["target"]["averageUtilization"] = spec["targetCPUUtilizationPercentage"]
        v2_spec["metrics"] = [metric]
    out["spec"] = v2_spec
    status = obj.get("status")
    if isinstance(status, dict):
        out["status"] = {k: status[k] for k in ("observedGeneration", "lastScaleTime", "currentReplicas",
                                                "desiredReplicas") if k in status}
    return out
