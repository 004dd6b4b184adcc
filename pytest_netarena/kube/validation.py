"""Per-kind validation producing 422 causes worded like the real apiserver's."""

from __future__ import annotations

import ipaddress
import re

from . import addresses
from .causes import Cause, bad_value, forbidden, required, unsupported
from .errors import invalid

DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
PROTOCOLS = addresses.PROTOCOLS
LABEL_NAME_KINDS = ("Namespace", "Service")
RBAC_KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")
RBAC_GROUP = "rbac.authorization.k8s.io"


def _name(kind: str, meta: dict) -> list[Cause]:
    name = meta.get("name")
    if not name:
        return [required("metadata.name", "name or generateName is required")]
    if kind in RBAC_KINDS:  # any path segment: "system:basic-user" is a fine role name
        for bad in ("/", "%"):
            if bad in name:
                return [bad_value("metadata.name", name, f"may not contain '{bad}'")]
        return [bad_value("metadata.name", name, f"may not be '{name}'")] if name in (".", "..") else []
    if kind in LABEL_NAME_KINDS:
        if len(name) > 63 or not DNS1123_LABEL.match(name):
            return [bad_value("metadata.name", name,
                              "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
                              "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
                              "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]
    elif len(name) > 253 or not DNS1123_SUBDOMAIN.match(name):
        return [bad_value("metadata.name", name,
                          "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                          "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
                          "regex used for validation is "
                          r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    return []


def _port_number(field: str, value) -> list[Cause]:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        return [bad_value(field, value, "must be between 1 and 65535, inclusive")]
    return []


def _protocol(field: str, value) -> list[Cause]:
    if value not in PROTOCOLS:
        return [unsupported(field, value, PROTOCOLS)]
    return []


def _selector(field: str, selector) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(selector, dict):
        return causes
    for i, expr in enumerate(selector.get("matchExpressions") or []):
        where = f"{field}.matchExpressions[{i}]"
        if not isinstance(expr, dict):
            causes.append(bad_value(where, expr, "must be an object"))
            continue
        op, values = expr.get("operator"), expr.get("values") or []
        if not expr.get("key"):
            causes.append(required(f"{where}.key"))
        if op in ("In", "NotIn"):
            if not values:
                causes.append(required(f"{where}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                causes.append(forbidden(f"{where}.values",
                                        "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        else:
            causes.append(bad_value(f"{where}.operator", op, "not a valid selector operator"))
    return causes


def _containers(field: str, containers) -> list[Cause]:
    if not containers:
        return [required(field)]
    causes: list[Cause] = []
    seen = set()
    for i, c in enumerate(containers):
        where = f"{field}[{i}]"
        if not isinstance(c, dict):
            continue
        name = c.get("name")
        if not name:
            causes.append(required(f"{where}.name"))
        elif not DNS1123_LABEL.match(name):
            causes.append(bad_value(f"{where}.name", name, "a lowercase RFC 1123 label must consist of lower case "
                                    "alphanumeric characters or '-', and must start and end with an alphanumeric "
                                    "character"))
        elif name in seen:
            causes.append((f"{where}.name", "FieldValueDuplicate", f'Duplicate value: "{name}"'))
        seen.add(name)
        if not c.get("image"):
            causes.append(required(f"{where}.image"))
        for j, port in enumerate(c.get("ports") or []):
            if isinstance(port, dict):
                causes += _port_number(f"{where}.ports[{j}].containerPort", port.get("containerPort"))
                causes += _protocol(f"{where}.ports[{j}].protocol", port.get("protocol", "TCP"))
    return causes


def pod(obj: dict, prefix: str = "spec") -> list[Cause]:
    spec = obj.get("spec") if prefix == "spec" else obj
    if not isinstance(spec, dict):
        return [required(prefix)]
    return _containers(f"{prefix}.containers", spec.get("containers"))


def _workload(obj: dict) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes: list[Cause] = []
    replicas = spec.get("replicas", 1)
    if isinstance(replicas, int) and replicas < 0:
        causes.append(bad_value("spec.replicas", replicas, "must be greater than or equal to 0"))
    selector = spec.get("selector")
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        causes.append(required("spec.selector"))
    else:
        causes += _selector("spec.selector", selector)
        from ..core.selectors import selector_matches

        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not causes and not selector_matches(selector, labels):
            causes.append(bad_value("spec.template.metadata.labels", labels,
                                    "`selector` does not match template `labels`"))
    template = spec.get("template") or {}
    causes += pod(template.get("spec") or {}, "spec.template.spec")
    return causes


def service(obj: dict) -> list[Cause]:
    spec = obj.get("spec") or {}
    causes: list[Cause] = []
    kind = spec.get("type", "ClusterIP")
    if kind not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
        causes.append(unsupported("spec.type", kind, ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")))
    ports = spec.get("ports") or []
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        causes.append(required("spec.ports"))
    names = set()
    for i, port in enumerate(ports):
        where = f"spec.ports[{i}]"
        if len(ports) > 1 and not port.get("name"):
            causes.append(required(f"{where}.name"))
        elif port.get("name") in names:
            causes.append((f"{where}.name", "FieldValueDuplicate", f'Duplicate value: "{port.get("name")}"'))
        names.add(port.get("name"))
        causes += _port_number(f"{where}.port", port.get("port"))
        causes += _protocol(f"{where}.protocol", port.get("protocol", "TCP"))
        target = port.get("targetPort")
        if isinstance(target, int):
            causes += _port_number(f"{where}.targetPort", target)
        elif isinstance(target, str) and not _valid_port_name(target):
            causes.append(bad_value(f"{where}.targetPort", target, "must contain only alpha-numeric characters "
                                    "(a-z, 0-9), and hyphens (-)"))
    return causes


def _valid_port_name(name: str) -> bool:
    return len(name) <= 15 and bool(IANA_SVC_NAME.match(name)) and "--" not in name and any(c.isalpha() for c in name)


def _cidr(field: str, text) -> tuple[list[Cause], object]:
    try:
        if not isinstance(text, str) or "/" not in text:
            raise ValueError
        return [], ipaddress.ip_network(text, strict=False)
    except ValueError:
        return [bad_value(field, text, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")], None


def _peer(field: str, peer) -> list[Cause]:
    if not isinstance(peer, dict):
        return [bad_value(field, peer, "must be an object")]
    causes: list[Cause] = []
    selectors = [k for k in ("podSelector", "namespaceSelector") if peer.get(k) is not None]
    block = peer.get("ipBlock")
    if block is not None and selectors:
        return [forbidden(field, "may not specify both ipBlock and another peer")]
    if block is None and not selectors:
        return [required(field, "must specify a peer")]
    for key in selectors:
        causes += _selector(f"{field}.{key}", peer[key])
    if block is not None:
        if not block.get("cidr"):
            return causes + [required(f"{field}.ipBlock.cidr")]
        errors, network = _cidr(f"{field}.ipBlock.cidr", block["cidr"])
        causes += errors
        for i, text in enumerate(block.get("except") or []):
            errors, sub = _cidr(f"{field}.ipBlock.except[{i}]", text)
            causes += errors
            if network is not None and sub is not None and (
                    sub.version != network.version or not sub.subnet_of(network) or sub == network):
                causes.append(bad_value(f"{field}.ipBlock.except[{i}]", text, "must be a strict subset of `cidr`"))
    return causes


def _netpol_port(field: str, port) -> list[Cause]:
    if not isinstance(port, dict):
        return [bad_value(field, port, "must be an object")]
    causes = _protocol(f"{field}.protocol", port.get("protocol", "TCP"))
    number, end = port.get("port"), port.get("endPort")
    if isinstance(number, int) and not isinstance(number, bool):
        causes += _port_number(f"{field}.port", number)
    elif isinstance(number, str):
        if not _valid_port_name(number):
            causes.append(bad_value(f"{field}.port", number, "must contain only alpha-numeric characters "
                                    "(a-z, 0-9), and hyphens (-)"))
    elif number is not None:
        causes.append(bad_value(f"{field}.port", number, "must be an integer or a port name"))
    if end is not None:
        if number is None:
            causes.append(required(f"{field}.port", "must be specified when endPort is specified"))
        elif isinstance(number, str):
            causes.append(bad_value(f"{field}.endPort", end, "may not be specified when `port` is non-numeric"))
        elif isinstance(end, int) and isinstance(number, int) and end < number:
            causes.append(bad_value(f"{field}.endPort", end, "must be greater than or equal to `port`"))
        causes += _port_number(f"{field}.endPort", end)
    return causes


def network_policy(obj: dict) -> list[Cause]:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return [required("spec")]
    causes = _selector("spec.podSelector", spec.get("podSelector"))
    for direction, peers_key in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(spec.get(direction) or []):
            where = f"spec.{direction}[{i}]"
            if not isinstance(rule, dict):
                causes.append(bad_value(where, rule, "must be an object"))
                continue
            for j, port in enumerate(rule.get("ports") or []):
                causes += _netpol_port(f"{where}.ports[{j}]", port)
            for j, peer in enumerate(rule.get(peers_key) or []):
                causes += _peer(f"{where}.{peers_key}[{j}]", peer)
    types = spec.get("policyTypes") or []
    for i, value in enumerate(types):
        if value not in ("Ingress", "Egress"):
            causes.append(unsupported(f"spec.policyTypes[{i}]", value, ("Egress", "Ingress")))
    if len(types) > 2:
        causes.append(bad_value("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return causes


def configmap(obj: dict) -> list[Cause]:
    causes = []
    for field in ("data", "binaryData"):
        for key in (obj.get(field) or {}):
            if not re.fullmatch(r"[-._a-zA-Z0-9]+", key) or len(key) > 253:
                causes.append(bad_value(f"{field}[{key}]", key, "a valid config key must consist of alphanumeric "
                                        "characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or "
                                        "'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"))
    return causes


def _role(obj: dict) -> list[Cause]:
    causes = []
    namespaced = obj.get("kind") == "Role"
    for i, rule in enumerate(obj.get("rules") or []):
        field = f"rules[{i}]"
        if not isinstance(rule, dict):
            causes.append(bad_value(field, rule, "must be an object"))
            continue
        if not rule.get("verbs"):
            causes.append(required(f"{field}.verbs", "verbs must contain at least one value"))
        urls = rule.get("nonResourceURLs") or []
        if urls:
            if namespaced:
                causes.append(bad_value(f"{field}.nonResourceURLs", urls,
                                        "namespaced rules cannot apply to non-resource URLs"))
            if rule.get("apiGroups") or rule.get("resources"):
                causes.append(bad_value(f"{field}.nonResourceURLs", urls,
                                        "rules cannot apply to both regular resources and non-resource URLs"))
            continue
        if not rule.get("apiGroups"):
            causes.append(required(f"{field}.apiGroups", "resource rules must supply at least one api group"))
        if not rule.get("resources"):
            causes.append(required(f"{field}.resources", "resource rules must supply at least one resource"))
    return causes


def _binding(obj: dict) -> list[Cause]:
    causes = []
    cluster = obj.get("kind") == "ClusterRoleBinding"
    ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
    if ref.get("apiGroup") != RBAC_GROUP:
        causes.append(unsupported("roleRef.apiGroup", ref.get("apiGroup", ""), (RBAC_GROUP,)))
    kinds = ("ClusterRole",) if cluster else ("Role", "ClusterRole")
    if ref.get("kind") not in kinds:
        causes.append(unsupported("roleRef.kind", ref.get("kind", ""), kinds))
    if not ref.get("name"):
        causes.append(required("roleRef.name"))
    for i, subject in enumerate(obj.get("subjects") or []):
        field = f"subjects[{i}]"
        if not isinstance(subject, dict):
            causes.append(bad_value(field, subject, "must be an object"))
            continue
        kind, group = subject.get("kind"), subject.get("apiGroup", "")
        if not subject.get("name"):
            causes.append(required(f"{field}.name"))
        if kind == "ServiceAccount":
            if group:
                causes.append(unsupported(f"{field}.apiGroup", group, ("",)))
            if cluster and not subject.get("namespace"):
                causes.append(required(f"{field}.namespace"))
        elif kind in ("User", "Group"):
            if group != RBAC_GROUP:
                causes.append(unsupported(f"{field}.apiGroup", group, (RBAC_GROUP,)))
        else:
            causes.append(unsupported(f"{field}.kind", kind or "", ("ServiceAccount", "User", "Group")))
    return causes


BY_KIND = {
    "Role": _role,
    "ClusterRole": _role,
    "RoleBinding": _binding,
    "ClusterRoleBinding": _binding,
    "Pod": lambda obj: pod(obj) + addresses.pod_status(obj),
    "Deployment": _workload,
    "ReplicaSet": _workload,
    "Service": lambda obj: service(obj) + addresses.service_ips(obj),
    "EndpointSlice": addresses.endpoint_slice,
    "NetworkPolicy": network_policy,
    "ConfigMap": configmap,
    "Secret": configmap,
}


def validate(kind: str, group: str, obj: dict) -> None:
    meta = obj.get("metadata") or {}
    causes = _name(kind, meta)
    fn = BY_KIND.get(kind)
    if fn is not None:
        causes += fn(obj)
    if causes:
        raise invalid(kind, group, meta.get("name") or "", causes)


def validate_status(kind: str, group: str, obj: dict) -> None:
    """A write of the status subresource: what the status holds that others read (a pod's addresses)."""
    causes = addresses.pod_status(obj) if kind == "Pod" else []
    if causes:
        raise invalid(kind, group, obj["metadata"].get("name") or "", causes)


def validate_update(kind: str, group: str, old: dict, new: dict) -> None:
    causes: list[Cause] = []
    if kind in ("Deployment", "ReplicaSet"):
        old_sel, new_sel = (old.get("spec") or {}).get("selector"), (new.get("spec") or {}).get("selector")
        if old_sel != new_sel:
            causes.append(bad_value("spec.selector", new_sel, "field is immutable"))
    if kind in ("RoleBinding", "ClusterRoleBinding") and old.get("roleRef") != new.get("roleRef"):
        causes.append(bad_value("roleRef", new.get("roleRef"), "cannot change roleRef"))
    if kind == "Service":
        old_ip, new_ip = (old.get("spec") or {}).get("clusterIP"), (new.get("spec") or {}).get("clusterIP")
        if new_ip and old_ip and new_ip != old_ip:
            causes.append(bad_value("spec.clusterIPs[0]", new_ip, "may not change once set"))
    if causes:
        raise invalid(kind, group, new["metadata"]["name"], causes)


def object_name(kind: str, meta: dict) -> list[Cause]:
    """The causes a kind's metadata.name has (the same check validate() starts with)."""
    return _name(kind, meta)
