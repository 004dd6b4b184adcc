"""Ingress and IngressClass (networking.k8s.io/v1): validation with the real messages and the default class."""

from __future__ import annotations

import ipaddress
import re

from .validation import Cause, DNS1123_LABEL, DNS1123_SUBDOMAIN, IANA_SVC_NAME, bad_value, required, unsupported

PATH_TYPES = ("Exact", "ImplementationSpecific", "Prefix")
DEFAULT_CLASS = "ingressclass.kubernetes.io/is-default-class"
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
             "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
WILDCARD = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist "
            "of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. "
            r"'*.example.com', regex used for validation is '\*\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*"
            r"[a-z0-9])?)*')")
CONTROLLER = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[^\s]+$")


def _host(field: str, host) -> list[Cause]:
    if not isinstance(host, str):
        return [bad_value(field, host, SUBDOMAIN)]
    try:
        ipaddress.ip_address(host)
        return [bad_value(field, host, "must be a DNS name, not an IP address")]
    except ValueError:
        pass
    if host.startswith("*."):
        return [] if DNS1123_SUBDOMAIN.match(host[2:]) else [bad_value(field, host, WILDCARD)]
    return [] if DNS1123_SUBDOMAIN.match(host) and len(host) <= 253 else [bad_value(field, host, SUBDOMAIN)]


def _backend(field: str, backend) -> list[Cause]:
    if not isinstance(backend, dict):
        return [bad_value(field, "", "resource or service backend is required")]
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [bad_value(field, "", "cannot set both resource and service backends")]
    if resource is not None:
        causes = [] if (resource or {}).get("kind") else [required(f"{field}.resource.kind")]
        return causes + ([] if (resource or {}).get("name") else [required(f"{field}.resource.name")])
    if not isinstance(service, dict):
        return [bad_value(field, "", "resource or service backend is required")]
    causes = []
    name = service.get("name")
    if not name:
        causes.append(required(f"{field}.service.name"))
    elif not DNS1123_LABEL.match(name) or len(name) > 63:
        causes.append(bad_value(f"{field}.service.name", name, "a DNS-1035 label must consist of lower case "
                                "alphanumeric characters or '-', start with an alphabetic character, and end with an "
                                "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
                                "is '[a-z]([-a-z0-9]*[a-z0-9])?')"))
    port = service.get("port") if isinstance(service.get("port"), dict) else {}
    by_name, number = port.get("name"), port.get("number")
    if by_name and number:
        causes.append(bad_value(field, "", "cannot set both port name & port number"))
    elif by_name:
        if not IANA_SVC_NAME.match(by_name) or len(by_name) > 15:
            causes.append(bad_value(f"{field}.service.port.name", by_name, "must contain only alpha-numeric "
                                    "characters (a-z, 0-9), and hyphens (-)"))
    elif number:
        if not isinstance(number, int) or not 1 <= number <= 65535:
            causes.append(bad_value(f"{field}.service.port.number", number, "must be between 1 and 65535, "
                                    "inclusive"))
    else:
        causes.append(required(f"{field}.service.port", "port name or number is required"))
    return causes


def validate(obj: dict) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    causes: list[Cause] = []
    rules, default = spec.get("rules") or [], spec.get("defaultBackend")
    if not rules and default is None:
        causes.append(bad_value("spec", "", "either `defaultBackend` or `rules` must be specified"))
    if default is not None:
        causes += _backend("spec.defaultBackend", default)
    name = spec.get("ingressClassName")
    if name is not None and (not isinstance(name, str) or not DNS1123_SUBDOMAIN.match(name)):
        causes.append(bad_value("spec.ingressClassName", name, SUBDOMAIN))
    for i, rule in enumerate(rules):
        where = f"spec.rules[{i}]"
        if not isinstance(rule, dict):
            causes.append(bad_value(where, rule, "must be an object"))
            continue
        if rule.get("host"):
            causes += _host(f"{where}.host", rule["host"])
        http = rule.get("http")
        if http is None:
            continue
        paths = (http or {}).get("paths") or []
        if not paths:
            causes.append(required(f"{where}.http.paths"))
        for j, path in enumerate(paths):
            causes += _path(f"{where}.http.paths[{j}]", path)
    for i, tls in enumerate(spec.get("tls") or []):
        for j, host in enumerate((tls or {}).get("hosts") or []):
            causes += _host(f"spec.tls[{i}].hosts[{j}]", host)
    return causes


def _path(where: str, path) -> list[Cause]:
    if not isinstance(path, dict):
        return [bad_value(where, path, "must be an object")]
    causes = []
    kind = path.get("pathType")
    if not kind:
        causes.append(required(f"{where}.pathType", "pathType must be specified"))
    elif kind not in PATH_TYPES:
        causes.append(unsupported(f"{where}.pathType", kind, PATH_TYPES))
    text = path.get("path")
    if kind in ("Exact", "Prefix"):
        if not isinstance(text, str) or not text.startswith("/"):
            causes.append(bad_value(f"{where}.path", text or "", "must be an absolute path"))
        elif "//" in text:
            causes.append(bad_value(f"{where}.path", text, "must not contain '//'"))
    return causes + _backend(f"{where}.backend", path.get("backend"))


def validate_update(old: dict, new: dict) -> list[Cause]:
    return []


def validate_class(obj: dict) -> list[Cause]:
    controller = (obj.get("spec") or {}).get("controller")
    if not controller:
        return [required("spec.controller")]
    if not CONTROLLER.match(controller) or len(controller) > 250:
        return [bad_value("spec.controller", controller, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    return []


def validate_class_update(old: dict, new: dict) -> list[Cause]:
    before, after = (old.get("spec") or {}).get("controller"), (new.get("spec") or {}).get("controller")
    return [] if before == after else [bad_value("spec.controller", after, "field is immutable")]


def admit(store, obj: dict, old: dict | None) -> None:
    """The DefaultIngressClass admission plugin: a new Ingress without a class gets the one default class."""
    spec = obj.get("spec")
    if old is not None or not isinstance(spec, dict) or spec.get("ingressClassName"):
        return
    if (obj["metadata"].get("annotations") or {}).get("kubernetes.io/ingress.class"):
        return
    defaults = [c for c in store.list("ingressclasses")
                if (c["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"]
    if defaults:
        spec["ingressClassName"] = max(defaults, key=lambda c: c["metadata"].get("creationTimestamp", ""))[
            "metadata"]["name"]
