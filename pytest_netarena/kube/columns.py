"""Table columns of the kinds beyond the core ones, and of custom resources (their CRD's printer columns)."""

from __future__ import annotations

from . import jsonpath
from .tables import AGE, NAME, _c, age, table

ACCESS_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"


def _spec(obj: dict) -> dict:
    return obj.get("spec") or {}


def _status(obj: dict) -> dict:
    return obj.get("status") or {}


def _created(obj: dict) -> str:
    return age(obj["metadata"].get("creationTimestamp"))


def _modes(modes) -> str:
    return ",".join(ACCESS_MODES.get(m, m) for m in modes or [])


def _volume_row(pv: dict) -> list:
    spec, ref = _spec(pv), _spec(pv).get("claimRef") or {}
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref.get("name") else ""
    return [pv["metadata"]["name"], (spec.get("capacity") or {}).get("storage", ""), _modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy", ""), _status(pv).get("phase", ""), claim,
            spec.get("storageClassName", ""), spec.get("volumeAttributesClassName") or "<unset>",
            _status(pv).get("reason", ""), _created(pv), spec.get("volumeMode", "Filesystem")]


def _claim_row(pvc: dict) -> list:
    spec, status = _spec(pvc), _status(pvc)
    bound = status.get("phase") == "Bound"
    return [pvc["metadata"]["name"], status.get("phase", "Pending"), spec.get("volumeName", ""),
            (status.get("capacity") or {}).get("storage", "") if bound else "",
            _modes(status.get("accessModes")) if bound else "", spec.get("storageClassName") or "",
            spec.get("volumeAttributesClassName") or "<unset>", _created(pvc), spec.get("volumeMode", "Filesystem")]


def _class_name(sc: dict) -> str:
    default = (sc["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"
    return sc["metadata"]["name"] + (" (default)" if default else "")


def _target_text(metric: dict, current: dict | None) -> str:
    """One metric of an HPA's TARGETS column, `cpu: 12%/80%` (kubectl 1.31+ words it so)."""
    kind = metric.get("type")
    field = {"Resource": "resource", "ContainerResource": "containerResource", "Pods": "pods", "Object": "object",
             "External": "external"}.get(kind, "")
    source = metric.get(field, {}) or {}
    target = source.get("target") or {}
    name = source.get("name") or (source.get("metric") or {}).get("name") or "<unknown>"
    now = "<unknown>"
    if current is not None:
        value = (current.get(field) or {}).get("current") or {}
        if target.get("type") == "Utilization" and value.get("averageUtilization") is not None:
            now = f"{value['averageUtilization']}%"
        elif value.get("averageValue") is not None:
            now = str(value["averageValue"])
        elif value.get("value") is not None:
            now = str(value["value"])
    if target.get("type") == "Utilization":
        wanted = f"{target.get('averageUtilization', '')}%"
    else:
        wanted = str(target.get("averageValue") or target.get("value") or "")
        if target.get("type") == "AverageValue" and kind in ("Object", "External"):
            wanted += " (avg)"
    return f"{name}: {now}/{wanted}"


def _targets(hpa: dict) -> str:
    metrics = _spec(hpa).get("metrics") or []
    currents = _status(hpa).get("currentMetrics") or []
    texts = [_target_text(m, currents[i] if i < len(currents) else None) for i, m in enumerate(metrics)]
    if not texts:
        return "<none>"
    return ", ".join(texts[:2]) + (f" + {len(texts) - 2} more..." if len(texts) > 2 else "")


def _hpa_row(hpa: dict) -> list:
    spec, ref = _spec(hpa), _spec(hpa).get("scaleTargetRef") or {}
    return [hpa["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}", _targets(hpa),
            spec.get("minReplicas", 1), spec.get("maxReplicas", 0), _status(hpa).get("currentReplicas", 0),
            _created(hpa)]


def _ingress_row(ing: dict) -> list:
    spec = _spec(ing)
    hosts = [r.get("host") for r in spec.get("rules") or [] if isinstance(r, dict) and r.get("host")]
    addresses = [a.get("ip") or a.get("hostname") for a in
                 ((_status(ing).get("loadBalancer") or {}).get("ingress") or []) if isinstance(a, dict)]
    return [ing["metadata"]["name"], spec.get("ingressClassName") or "<none>", ",".join(hosts) or "*",
            ",".join(a for a in addresses if a), "80, 443" if spec.get("tls") else "80", _created(ing)]


def _parameters(ic: dict) -> str:
    ref = _spec(ic).get("parameters")
    if not ref:
        return "<none>"
    return "/".join(p for p in (ref.get("apiGroup"), ref.get("kind"), ref.get("name")) if p)


def _pdb_row(pdb: dict) -> list:
    spec = _spec(pdb)
    return [pdb["metadata"]["name"], str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
            str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A",
            _status(pdb).get("disruptionsAllowed", 0), _created(pdb)]


MORE = {
    "PersistentVolume": ([NAME, _c("Capacity"), _c("Access Modes"), _c("Reclaim Policy"), _c("Status"), _c("Claim"),
                          _c("StorageClass"), _c("VolumeAttributesClass"), _c("Reason"), AGE,
                          _c("VolumeMode", priority=1)], _volume_row),
    "PersistentVolumeClaim": ([NAME, _c("Status"), _c("Volume"), _c("Capacity"), _c("Access Modes"),
                               _c("StorageClass"), _c("VolumeAttributesClass"), AGE, _c("VolumeMode", priority=1)],
                              _claim_row),
    "StorageClass": ([NAME, _c("Provisioner"), _c("ReclaimPolicy"), _c("VolumeBindingMode"),
                      _c("AllowVolumeExpansion"), AGE],
                     lambda o: [_class_name(o), o.get("provisioner", ""), o.get("reclaimPolicy", "Delete"),
                                o.get("volumeBindingMode", "Immediate"), bool(o.get("allowVolumeExpansion")),
                                _created(o)]),
    "HorizontalPodAutoscaler": ([NAME, _c("Reference"), _c("Targets"), _c("MinPods", "integer"),
                                 _c("MaxPods", "integer"), _c("Replicas", "integer"), AGE], _hpa_row),
    "Ingress": ([NAME, _c("Class"), _c("Hosts"), _c("Address"), _c("Ports"), AGE], _ingress_row),
    "IngressClass": ([NAME, _c("Controller"), _c("Parameters"), AGE],
                     lambda o: [o["metadata"]["name"], _spec(o).get("controller", ""), _parameters(o), _created(o)]),
    "PodDisruptionBudget": ([NAME, _c("Min Available"), _c("Max Unavailable"), _c("Allowed Disruptions", "integer"),
                             AGE], _pdb_row),
    "Lease": ([NAME, _c("Holder"), AGE],
              lambda o: [o["metadata"]["name"], _spec(o).get("holderIdentity", ""), _created(o)]),
    "CustomResourceDefinition": ([NAME, _c("Created At", "date")],
                                 lambda o: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")]),
    "PriorityClass": ([NAME, _c("Value", "integer"), _c("Global-Default", "boolean"), AGE,
                       _c("PreemptionPolicy", priority=1)],
                      lambda o: [o["metadata"]["name"], o.get("value", 0), bool(o.get("globalDefault")), _created(o),
                                 o.get("preemptionPolicy", "PreemptLowerPriority")]),
}


def _cell(obj: dict, column: dict):
    try:
        found = jsonpath.find(obj, str(column.get("jsonPath", "")))
    except ValueError:
        return None
    if not found:
        return None
    value = found[0]
    if column.get("type") == "date":
        return age(value) if isinstance(value, str) else None
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, separators=(",", ":"))
    return value


def custom_columns(printer_columns: tuple) -> tuple:
    """(columns, row function) of a custom resource: Name and its printer columns (Age when it has none)."""
    if not printer_columns:
        return [NAME, AGE], lambda o: [o["metadata"]["name"], _created(o)]
    columns = [NAME] + [{"name": c.get("name", ""), "type": c.get("type", "string"), "format": c.get("format", ""),
                         "description": c.get("description", ""), "priority": int(c.get("priority") or 0)}
                        for c in printer_columns]
    return columns, lambda o: [o["metadata"]["name"], *(_cell(o, c) for c in printer_columns)]



def table_for(res, objects: list[dict], resource_version: str, include_object: str = "Metadata") -> dict:
    """The Table of res's objects: its kind's columns, or a custom resource's printer columns."""
    if res.custom is not None:
        return table(res.kind, objects, resource_version, include_object, custom_columns(res.custom.columns))
    return table(res.kind, objects, resource_version, include_object, MORE.get(res.kind))
