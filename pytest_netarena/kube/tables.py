"""Server-side Table output for `kubectl get`: columns per kind, cells, and human-readable ages."""

from __future__ import annotations

import datetime as dt

from .selectors import selector_string


def now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def timestamp(when: dt.datetime | None = None) -> str:
    return (when or now()).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


def human_duration(seconds: float) -> str:
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        return f"{hours // (24 * 365)}y{(hours // 24) % 365}d"
    return f"{hours // (24 * 365)}y"


def age(text: str | None) -> str:
    when = parse_time(text)
    if when is None:
        return "<unknown>"
    return human_duration((now() - when).total_seconds())


def _containers(obj: dict) -> list[dict]:
    return ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []


def _terminated_reason(state: dict, prefix: str = "") -> str:
    if state.get("reason"):
        return prefix + state["reason"]
    if state.get("signal"):
        return f"{prefix}Signal:{state['signal']}"
    return f"{prefix}ExitCode:{state.get('exitCode', 0)}"


def _pod_summary(pod: dict) -> tuple[str, int, int]:
    """(STATUS, ready containers, restarts) as kubectl's pod printer computes them, init containers included."""
    meta, spec, status = pod.get("metadata", {}), pod.get("spec") or {}, pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Pending"
    restarts = ready = 0
    sidecars = {c.get("name") for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"}
    inits = status.get("initContainerStatuses") or []
    initializing = False
    for index, cs in enumerate(inits):
        restarts += int(cs.get("restartCount") or 0)
        state = cs.get("state") or {}
        if "terminated" in state and state["terminated"].get("exitCode") == 0:
            continue
        if cs.get("name") in sidecars and cs.get("started"):
            ready += 1 if cs.get("ready") else 0
            continue
        if "terminated" in state:
            reason = _terminated_reason(state["terminated"], "Init:")
        elif (state.get("waiting") or {}).get("reason") and state["waiting"]["reason"] != "PodInitializing":
            reason = "Init:" + state["waiting"]["reason"]
        else:
            reason = f"Init:{index}/{len(spec.get('initContainers') or [])}"
        initializing = True
        break
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    if not initializing or conditions.get("Initialized") == "True":
        restarts, running = 0, False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount") or 0)
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = state["waiting"]["reason"]
            elif "terminated" in state:
                reason = _terminated_reason(state["terminated"])
            elif cs.get("ready") and "running" in state:
                running = True
                ready += 1
        if reason == "Completed" and running:
            reason = "Running" if conditions.get("Ready") == "True" else "NotReady"
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and status.get("phase") not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return reason, ready, restarts


def pod_status(pod: dict) -> str:
    return _pod_summary(pod)[0]


def _pod_row(pod: dict, wide: bool) -> list:
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    sidecars = sum(1 for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always")
    total = len(spec.get("containers") or []) + sidecars
    reason, ready, restarts = _pod_summary(pod)
    row = [pod["metadata"]["name"], f"{ready}/{total}", reason, str(restarts),
           age(pod["metadata"].get("creationTimestamp"))]
    gates = spec.get("readinessGates") or []
    row += [status.get("podIP") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", f"{len(gates)}/{len(gates)}" if gates else "<none>"]
    return row


def _ports(svc: dict) -> str:
    parts = []
    for port in (svc.get("spec") or {}).get("ports") or []:
        text = str(port.get("port"))
        if port.get("nodePort"):
            text += f":{port['nodePort']}"
        parts.append(f"{text}/{port.get('protocol', 'TCP')}")
    return ",".join(parts) or "<none>"


def _external_ip(svc: dict) -> str:
    spec = svc.get("spec") or {}
    kind = spec.get("type", "ClusterIP")
    if kind == "ExternalName":
        return spec.get("externalName") or "<none>"
    ips = list(spec.get("externalIPs") or [])
    if kind == "LoadBalancer":
        ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        ips += [i.get("ip") or i.get("hostname") for i in ingress]
        return ",".join(ips) if ips else "<pending>"
    return ",".join(ips) if ips else "<none>"


def _endpoints(ep: dict) -> str:
    items = []
    for subset in ep.get("subsets") or []:
        ports = subset.get("ports") or [{}]
        for address in subset.get("addresses") or []:
            for port in ports:
                items.append(f"{address['ip']}:{port['port']}" if "port" in port else address["ip"])
    if not items:
        return "<none>"
    text = ",".join(items[:3])
    return text + (f" + {len(items) - 3} more..." if len(items) > 3 else "")


def _images(obj: dict) -> tuple[str, str]:
    cs = _containers(obj)
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _node_ready(node: dict) -> str:
    state = "Unknown"
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            state = "Ready" if cond.get("status") == "True" else "NotReady"
    return state + (",SchedulingDisabled" if (node.get("spec") or {}).get("unschedulable") else "")


def _event_object(ev: dict) -> str:
    obj = ev.get("involvedObject") or {}
    return f"{(obj.get('kind') or '').lower()}/{obj.get('name', '')}"


def _c(name: str, kind: str = "string", priority: int = 0, fmt: str = "") -> dict:
    return {"name": name, "type": kind, "format": fmt, "description": name, "priority": priority}


def _status(obj: dict, key: str) -> int:
    return int((obj.get("status") or {}).get(key) or 0)


_SUBJECT_COLUMNS = [_c("Users", priority=1), _c("Groups", priority=1), _c("ServiceAccounts", priority=1)]


def _binding_row(binding: dict) -> list:
    ref = binding.get("roleRef") or {}
    subjects = binding.get("subjects") or []

    def names(kind: str) -> str:
        return ", ".join((f"{s.get('namespace', '')}/{s.get('name', '')}" if kind == "ServiceAccount"
                          else s.get("name", "")) for s in subjects if s.get("kind") == kind)

    return [binding["metadata"]["name"], f"{ref.get('kind', '')}/{ref.get('name', '')}",
            age(binding["metadata"].get("creationTimestamp")), names("User"), names("Group"), names("ServiceAccount")]


NAME = _c("Name", fmt="name")
AGE = _c("Age")

# kind -> (columns, row function)
def _job_row(job: dict) -> list:
    """kubectl's Job columns: NAME, STATUS, COMPLETIONS, DURATION, AGE."""
    spec, status = job.get("spec") or {}, job.get("status") or {}
    kinds = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
    shown = "Running"
    for kind, text in (("Complete", "Complete"), ("Failed", "Failed")):
        if kind in kinds:
            shown = text
            break
    else:
        if job["metadata"].get("deletionTimestamp"):
            shown = "Terminating"
        elif "Suspended" in kinds:
            shown = "Suspended"
        elif "FailureTarget" in kinds:
            shown = "FailureTarget"
        elif "SuccessCriteriaMet" in kinds:
            shown = "SuccessCriteriaMet"
    completions = spec.get("completions")
    done = f"{status.get('succeeded', 0)}/{completions}" if completions is not None else \
        f"{status.get('succeeded', 0)}/1 of {spec.get('parallelism', 1)}"
    duration = ""
    if status.get("startTime"):
        end = _parse_time(status.get("completionTime")) or dt.datetime.now(dt.UTC)
        start = _parse_time(status["startTime"])
        duration = _short((end - start).total_seconds()) if start else ""
    return [job["metadata"]["name"], shown, done, duration, age(job["metadata"].get("creationTimestamp"))]


def _short(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60}s" if seconds < 600 else f"{seconds // 60}m"
    return f"{seconds // 3600}h{(seconds % 3600) // 60}m"


def _parse_time(stamp: str | None):
    try:
        return dt.datetime.strptime(stamp or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None


COLUMNS = {
    "Pod": ([NAME, _c("Ready"), _c("Status"), _c("Restarts"), AGE, _c("IP", priority=1),
             _c("Node", priority=1), _c("Nominated Node", priority=1), _c("Readiness Gates", priority=1)],
            lambda o: _pod_row(o, True)),
    "Service": ([NAME, _c("Type"), _c("Cluster-IP"), _c("External-IP"), _c("Port(s)"), AGE,
                 _c("Selector", priority=1)],
                lambda o: [o["metadata"]["name"], (o.get("spec") or {}).get("type", "ClusterIP"),
                           (o.get("spec") or {}).get("clusterIP") or "<none>", _external_ip(o), _ports(o),
                           age(o["metadata"].get("creationTimestamp")),
                           ",".join(f"{k}={v}" for k, v in sorted(((o.get("spec") or {}).get("selector") or {}).items()))
                           or "<none>"]),
    "Deployment": ([NAME, _c("Ready"), _c("Up-to-date", "integer"), _c("Available", "integer"), AGE,
                    _c("Containers", priority=1), _c("Images", priority=1), _c("Selector", priority=1)],
                   lambda o: [o["metadata"]["name"],
                              f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 1)}",
                              (o.get("status") or {}).get("updatedReplicas", 0),
                              (o.get("status") or {}).get("availableReplicas", 0),
                              age(o["metadata"].get("creationTimestamp")), *_images(o),
                              selector_string((o.get("spec") or {}).get("selector"))]),
    "ReplicaSet": ([NAME, _c("Desired", "integer"), _c("Current", "integer"), _c("Ready", "integer"), AGE,
                    _c("Containers", priority=1), _c("Images", priority=1), _c("Selector", priority=1)],
                   lambda o: [o["metadata"]["name"], (o.get("spec") or {}).get("replicas", 1),
                              (o.get("status") or {}).get("replicas", 0),
                              (o.get("status") or {}).get("readyReplicas", 0),
                              age(o["metadata"].get("creationTimestamp")), *_images(o),
                              selector_string((o.get("spec") or {}).get("selector"))]),
    "ConfigMap": ([NAME, _c("Data", "integer"), AGE],
                  lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                             age(o["metadata"].get("creationTimestamp"))]),
    "Secret": ([NAME, _c("Type"), _c("Data", "integer"), AGE],
               lambda o: [o["metadata"]["name"], o.get("type", "Opaque"), len(o.get("data") or {}),
                          age(o["metadata"].get("creationTimestamp"))]),
    "Namespace": ([NAME, _c("Status"), AGE],
                  lambda o: [o["metadata"]["name"], (o.get("status") or {}).get("phase", "Active"),
                             age(o["metadata"].get("creationTimestamp"))]),
    "Endpoints": ([NAME, _c("Endpoints"), AGE],
                  lambda o: [o["metadata"]["name"], _endpoints(o), age(o["metadata"].get("creationTimestamp"))]),
    "EndpointSlice": ([NAME, _c("AddressType"), _c("Ports"), _c("Endpoints"), AGE],
                      lambda o: [o["metadata"]["name"], o.get("addressType", "IPv4"),
                                 ",".join(str(p.get("port")) for p in o.get("ports") or []) or "<unset>",
                                 ",".join(a for e in o.get("endpoints") or [] for a in e.get("addresses", []))
                                 or "<unset>", age(o["metadata"].get("creationTimestamp"))]),
    "NetworkPolicy": ([NAME, _c("Pod-Selector"), AGE],
                      lambda o: [o["metadata"]["name"],
                                 selector_string((o.get("spec") or {}).get("podSelector")) or "<none>",
                                 age(o["metadata"].get("creationTimestamp"))]),
    "Event": ([_c("Last Seen"), _c("Type"), _c("Reason"), _c("Object"), _c("Message"), NAME],
              lambda o: [age(o.get("lastTimestamp") or o.get("eventTime") or o["metadata"].get("creationTimestamp")),
                         o.get("type", "Normal"), o.get("reason", ""), _event_object(o), o.get("message", ""),
                         o["metadata"]["name"]]),
    "Node": ([NAME, _c("Status"), _c("Roles"), AGE, _c("Version"), _c("Internal-IP", priority=1),
              _c("External-IP", priority=1), _c("OS-Image", priority=1), _c("Kernel-Version", priority=1),
              _c("Container-Runtime", priority=1)],
             lambda o: [o["metadata"]["name"], _node_ready(o),
                        ",".join(sorted(k.split("/", 1)[1] for k in (o["metadata"].get("labels") or {})
                                        if k.startswith("node-role.kubernetes.io/"))) or "<none>",
                        age(o["metadata"].get("creationTimestamp")),
                        ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", ""),
                        next((a["address"] for a in (o.get("status") or {}).get("addresses") or []
                              if a.get("type") == "InternalIP"), "<none>"), "<none>",
                        ((o.get("status") or {}).get("nodeInfo") or {}).get("osImage", ""),
                        ((o.get("status") or {}).get("nodeInfo") or {}).get("kernelVersion", ""),
                        ((o.get("status") or {}).get("nodeInfo") or {}).get("containerRuntimeVersion", "")]),
    "ServiceAccount": ([NAME, _c("Secrets", "integer"), AGE],
                       lambda o: [o["metadata"]["name"], len(o.get("secrets") or []),
                                  age(o["metadata"].get("creationTimestamp"))]),
    "Role": ([NAME, _c("Created At", "date")], lambda o: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")]),
    "ClusterRole": ([NAME, _c("Created At", "date")],
                    lambda o: [o["metadata"]["name"], o["metadata"].get("creationTimestamp")]),
    "RoleBinding": ([NAME, _c("Role"), AGE, *_SUBJECT_COLUMNS], _binding_row),
    "ClusterRoleBinding": ([NAME, _c("Role"), AGE, *_SUBJECT_COLUMNS], _binding_row),
    "DaemonSet": ([NAME, _c("Desired", "integer"), _c("Current", "integer"), _c("Ready", "integer"),
                   _c("Up-to-date", "integer"), _c("Available", "integer"), _c("Node Selector"), AGE,
                   _c("Containers", priority=1), _c("Images", priority=1), _c("Selector", priority=1)],
                  lambda o: [o["metadata"]["name"], *(_status(o, k) for k in (
                      "desiredNumberScheduled", "currentNumberScheduled", "numberReady", "updatedNumberScheduled",
                      "numberAvailable")),
                      ",".join(f"{k}={v}" for k, v in sorted((((o.get("spec") or {}).get("template") or {})
                                                             .get("spec") or {}).get("nodeSelector", {}).items()))
                      or "<none>", age(o["metadata"].get("creationTimestamp")), *_images(o),
                      selector_string((o.get("spec") or {}).get("selector"))]),
    "StatefulSet": ([NAME, _c("Ready"), AGE, _c("Containers", priority=1), _c("Images", priority=1)],
                    lambda o: [o["metadata"]["name"],
                               f"{_status(o, 'readyReplicas')}/{(o.get('spec') or {}).get('replicas', 1)}",
                               age(o["metadata"].get("creationTimestamp")), *_images(o)]),
    "Job": ([NAME, _c("Status"), _c("Completions"), _c("Duration"), AGE, _c("Containers", priority=1),
             _c("Images", priority=1), _c("Selector", priority=1)],
            lambda o: [*_job_row(o), *_images(o), selector_string((o.get("spec") or {}).get("selector"))]),
    "CronJob": ([NAME, _c("Schedule"), _c("Timezone"), _c("Suspend", "boolean"), _c("Active", "integer"),
                 _c("Last Schedule"), AGE],
                lambda o: [o["metadata"]["name"], (o.get("spec") or {}).get("schedule", ""),
                           (o.get("spec") or {}).get("timeZone") or "<none>",
                           bool((o.get("spec") or {}).get("suspend")), len((o.get("status") or {}).get("active") or []),
                           age((o.get("status") or {}).get("lastScheduleTime")) if (o.get("status") or {}).get(
                               "lastScheduleTime") else "<none>", age(o["metadata"].get("creationTimestamp"))]),
}
# Event tables hide the name column (wide only), as upstream does.
COLUMNS["Event"][0][5] = _c("Name", fmt="name", priority=1)


def table(kind: str, objects: list[dict], resource_version: str, include_object: str = "Metadata",
          layout: tuple | None = None) -> dict:
    """layout: (columns, row function), else the kind's own."""
    if layout is None:
        layout = COLUMNS.get(kind)
    columns, row_fn = layout or ([NAME, AGE], lambda o: [o["metadata"]["name"],
                                                         age(o["metadata"].get("creationTimestamp"))])
    rows = []
    for obj in objects:
        row = {"cells": row_fn(obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": obj.get("metadata", {})}
        rows.append(row)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
            "columnDefinitions": columns, "rows": rows}
