"""The endpoints controllers: a Service's Endpoints and EndpointSlices from the ready pods its selector picks.

With spec.publishNotReadyAddresses the pods count before they are ready (a StatefulSet's peers finding each
other); a pod whose hostname and subdomain name the Service carries its hostname (its own DNS name).
"""

from __future__ import annotations

import copy
import ipaddress
import json

from ..core.selectors import selector_from_dict
from .node import NODE_NAME
from .workloads import Writer, owned_by, owner, ready, suffix

MANAGED_EP = "endpoints.kubernetes.io/managed-by"


def _resolve_port(pod: dict, target, protocol: str) -> int | None:
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in (pod.get("spec") or {}).get("containers") or []:
        for port in c.get("ports") or []:
            if port.get("name") == target and port.get("protocol", "TCP") == protocol:
                return port.get("containerPort")
    return None


def service_endpoints(writer: Writer, ns: str, name: str) -> None:
    store = writer.store
    svc = store.get("services", ns, name)
    if svc is None:
        ep = store.get("endpoints", ns, name)
        if ep is not None and (ep["metadata"].get("labels") or {}).get(MANAGED_EP):
            writer.remove("endpoints", ns, name)
        return
    selector = (svc.get("spec") or {}).get("selector")
    if not selector or (svc.get("spec") or {}).get("type") == "ExternalName":
        return
    chosen = selector_from_dict({"matchLabels": selector})  # read once, matched against every pod
    early = bool((svc.get("spec") or {}).get("publishNotReadyAddresses"))
    members = [p for p in store.list("pods", ns) if (ready(p) or (early and _alive(p)))
               and (p.get("status") or {}).get("podIP") and chosen.matches(p["metadata"].get("labels"))]
    groups: dict[str, tuple[list, list]] = {}  # pods with the same resolved ports share a subset and a slice
    for pod in members:
        ports = _endpoint_ports(svc, pod)
        groups.setdefault(json.dumps(ports, sort_keys=True), (ports, []))[1].append(pod)
    _write_endpoints(writer, svc, groups)
    _write_slices(writer, svc, groups)


def _endpoint_ports(svc: dict, pod: dict) -> list[dict]:
    """The service's ports as this pod serves them (target ports it does not name are left out)."""
    ports = []
    for port in (svc.get("spec") or {}).get("ports") or []:
        number = _resolve_port(pod, port.get("targetPort", port.get("port")), port.get("protocol", "TCP"))
        if number is None:
            continue
        entry = {"port": number, "protocol": port.get("protocol", "TCP")}
        if port.get("name"):
            entry = {"name": port["name"], **entry}
        if port.get("appProtocol"):
            entry["appProtocol"] = port["appProtocol"]
        ports.append(entry)
    return ports


def _alive(pod: dict) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get("phase") not in (
        "Succeeded", "Failed")


def _hostname(pod: dict, service: str) -> dict:
    """{"hostname": ...} for a pod that names this Service as its subdomain, else {}."""
    spec = pod.get("spec") or {}
    return {"hostname": spec["hostname"]} if spec.get("hostname") and spec.get("subdomain") == service else {}


def _target(pod: dict) -> dict:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]}


def _ip_key(pod: dict):
    return ipaddress.ip_address(pod["status"]["podIP"])


def _write_endpoints(writer: Writer, svc: dict, groups) -> None:
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    subsets = []
    for key in sorted(groups):
        ports, pods = groups[key]
        subset = {"addresses": [{"ip": p["status"]["podIP"], **_hostname(p, name),
                                 "nodeName": p["spec"].get("nodeName", NODE_NAME), "targetRef": _target(p)}
                                for p in sorted(pods, key=_ip_key)]}
        if ports:
            subset["ports"] = ports
        subsets.append(subset)
    labels = dict(svc["metadata"].get("labels") or {}, **{MANAGED_EP: "endpoint-controller"})
    old = writer.store.get("endpoints", ns, name)
    if old is not None and not (old["metadata"].get("labels") or {}).get(MANAGED_EP):
        return  # hand-written endpoints of a service that also has a selector: leave alone
    ep = copy.deepcopy(old) if old else {"apiVersion": "v1", "kind": "Endpoints",
                                         "metadata": {"name": name, "namespace": ns}}
    ep["metadata"]["labels"] = labels
    if subsets:
        ep["subsets"] = subsets
    else:
        ep.pop("subsets", None)
    if old is None:
        writer.create("endpoints", ep)
    else:
        writer.put("endpoints", ep, old)


def _write_slices(writer: Writer, svc: dict, groups) -> None:
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    existing = {s["metadata"]["name"]: s for s in writer.store.list("endpointslices", ns)
                if (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name") == name
                and owned_by(s, svc)}
    wanted = {}
    for index, key in enumerate(sorted(groups) or [""]):
        ports, pods = groups.get(key, ([], []))
        slice_name = f"{name}-{suffix(svc['metadata']['uid'] + str(index), 5)}"
        wanted[slice_name] = {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": slice_name, "generateName": f"{name}-", "namespace": ns,
                         "labels": dict(svc["metadata"].get("labels") or {}, **{
                             "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                             "kubernetes.io/service-name": name}),
                         "ownerReferences": [owner(svc)], "generation": 1},
            "addressType": "IPv4",
            "endpoints": [{"addresses": [p["status"]["podIP"]],
                           "conditions": {"ready": True, "serving": True, "terminating": False}, **_hostname(p, name),
                           "nodeName": p["spec"].get("nodeName", NODE_NAME), "targetRef": _target(p)}
                          for p in sorted(pods, key=_ip_key)],
            "ports": [{"name": p.get("name", ""), **{k: v for k, v in p.items() if k != "name"}} for p in ports]}
    for slice_name, obj in wanted.items():
        old = existing.pop(slice_name, None)
        if old is None:
            writer.create("endpointslices", obj)
        else:
            merged = copy.deepcopy(old)
            merged["endpoints"], merged["ports"] = obj["endpoints"], obj["ports"]
            merged["metadata"]["labels"] = obj["metadata"]["labels"]
            writer.put("endpointslices", merged, old)
    for slice_name in existing:
        writer.remove("endpointslices", ns, slice_name)
