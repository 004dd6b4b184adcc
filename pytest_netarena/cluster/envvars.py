"""A container's environment as the kubelet makes it: service links, envFrom, env with valueFrom, $(VAR) expansion.

References are read from the store when the container starts (and at each restart), as the kubelet
does: a ConfigMap or Secret that is missing, or lacks the key, and is not `optional`, is a
ConfigError whose message is the kubelet's ("couldn't find key mode in ConfigMap team/app-config"),
and the container waits as `CreateContainerConfigError` until it is there.
"""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Mapping

from ..kube import quantity

#: a valid environment variable name (envFrom skips the keys that are not, as the kubelet does)
_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
#: $(VAR) references in values, command and args; $$ escapes a dollar
_REFERENCE = re.compile(r"\$\$|\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)")
_LABEL_FIELD = re.compile(r"^metadata\.(labels|annotations)\['([^']*)'\]$")


class ConfigError(ValueError):
    """What keeps a container from starting: its message is the waiting reason's (CreateContainerConfigError)."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """$(VAR) replaced by the variable's value where it is defined, left as it is where not; $$ is one $."""
    def one(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        return env[name] if name in env else match.group(0)

    return _REFERENCE.sub(one, text)


def _source(store, kind: str, namespace: str, name: str):
    plural = "configmaps" if kind == "ConfigMap" else "secrets"
    return store.get(plural, namespace, name) if name else None


def _values(obj: dict, kind: str) -> dict[str, str]:
    if kind == "ConfigMap":
        found = {k: str(v) for k, v in (obj.get("data") or {}).items()}
        for key, value in (obj.get("binaryData") or {}).items():
            found.setdefault(key, base64.b64decode(value).decode(errors="replace"))
        return found
    return {k: base64.b64decode(v or "").decode(errors="replace") for k, v in (obj.get("data") or {}).items()}


def _key_ref(store, namespace: str, ref: dict, kind: str) -> str | None:
    """The value a configMapKeyRef or secretKeyRef names; None for an optional one that is absent."""
    name, key, optional = ref.get("name") or "", ref.get("key") or "", bool(ref.get("optional"))
    obj = _source(store, kind, namespace, name)
    if obj is None:
        if optional:
            return None
        raise ConfigError(f'{kind.lower()} "{name}" not found')
    values = _values(obj, kind)
    if key not in values:
        if optional:
            return None
        raise ConfigError(f"couldn't find key {key} in {kind} {namespace}/{name}")
    return values[key]


def field_value(pod: dict, path: str) -> str:
    """A fieldRef's value (metadata.name, metadata.labels['app'], status.podIP, ...)."""
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    match = _LABEL_FIELD.match(path)
    if match:
        return str((meta.get(match.group(1)) or {}).get(match.group(2), ""))
    simple = {"metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
              "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
              "spec.serviceAccountName": spec.get("serviceAccountName"), "status.hostIP": status.get("hostIP"),
              "status.podIP": status.get("podIP"),
              "status.hostIPs": ",".join(a.get("ip", "") for a in status.get("hostIPs") or []),
              "status.podIPs": ",".join(a.get("ip", "") for a in status.get("podIPs") or [])}
    if path in ("metadata.labels", "metadata.annotations"):
        values = meta.get(path.split(".")[1]) or {}
        return "\n".join(f'{k}="{v}"' for k, v in sorted(values.items()))
    if path not in simple:
        raise ConfigError(f'unsupported fieldPath: "{path}"')
    return str(simple[path] or "")


def resource_value(pod: dict, container_name: str, ref: dict, allocatable: Mapping[str, str]) -> str:
    """A resourceFieldRef's value: the container's request or limit (a limit it lacks is the node's allocatable),
    divided by the divisor and rounded up, as the kubelet writes it."""
    resource = ref.get("resource") or ""
    containers = (pod.get("spec") or {}).get("containers") or []
    container = next((c for c in containers if c.get("name") == (ref.get("containerName") or container_name)), None)
    if container is None or "." not in resource:
        raise ConfigError(f'unsupported resource: "{resource}"')
    which, name = resource.split(".", 1)
    amounts = (container.get("resources") or {}).get(which) or {}
    amount = amounts.get(name)
    if amount is None and which == "requests":
        amount = ((container.get("resources") or {}).get("limits") or {}).get(name)
    if amount is None:
        amount = allocatable.get(name, "0") if which == "limits" else "0"
    divisor = quantity.parse(ref.get("divisor") or "1") or 1.0
    return str(math.ceil(quantity.parse(amount) / divisor - 1e-9))


def environment(store, pod: dict, container: dict, links: Mapping[str, str],
                allocatable: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """(the container's variables, the envFrom keys skipped as invalid names); ConfigError when one cannot be made."""
    namespace = pod["metadata"]["namespace"]
    env: dict[str, str] = dict(links)
    skipped: list[str] = []
    for source in container.get("envFrom") or ():
        kind, ref = ("ConfigMap", source.get("configMapRef")) if source.get("configMapRef") else (
            "Secret", source.get("secretRef"))
        if not isinstance(ref, dict):
            continue
        obj = _source(store, kind, namespace, ref.get("name") or "")
        if obj is None:
            if ref.get("optional"):
                continue
            raise ConfigError(f'{kind.lower()} "{ref.get("name") or ""}" not found')
        for key, value in _values(obj, kind).items():
            name = (source.get("prefix") or "") + key
            if _NAME.match(name):
                env[name] = value
            else:
                skipped.append(name)
    for variable in container.get("env") or ():
        name = variable.get("name")
        if not isinstance(name, str) or not name:
            continue
        source = variable.get("valueFrom")
        if not isinstance(source, dict):
            value = variable.get("value")
            env[name] = expand(value, env) if isinstance(value, str) else ""
            continue
        found: str | None
        if source.get("configMapKeyRef"):
            found = _key_ref(store, namespace, source["configMapKeyRef"], "ConfigMap")
        elif source.get("secretKeyRef"):
            found = _key_ref(store, namespace, source["secretKeyRef"], "Secret")
        elif source.get("fieldRef"):
            found = field_value(pod, (source["fieldRef"] or {}).get("fieldPath") or "")
        elif source.get("resourceFieldRef"):
            found = resource_value(pod, container.get("name") or "", source["resourceFieldRef"], allocatable)
        else:
            found = ""
        if found is not None:
            env[name] = found
    return env, skipped


def command(argv: tuple[str, ...], env: Mapping[str, str]) -> tuple[str, ...]:
    """command and args with their $(VAR) references expanded (the kubelet does it before the runtime sees them)."""
    return tuple(expand(part, env) for part in argv)


def service_links(store, namespace: str, enabled: bool = True) -> dict[str, str]:
    """The service links a kubelet gives containers: NAME_SERVICE_HOST and NAME_SERVICE_PORT per Service of the
    namespace (only the API server's when the pod sets enableServiceLinks false)."""
    found = {}
    for svc in store.list("services", namespace) if enabled else ():
        spec = svc.get("spec") or {}
        address, ports = spec.get("clusterIP"), spec.get("ports") or []
        if not address or address == "None" or not ports:
            continue
        prefix = svc["metadata"]["name"].upper().replace("-", "_")
        found[f"{prefix}_SERVICE_HOST"] = address
        found[f"{prefix}_SERVICE_PORT"] = str(ports[0].get("port"))
    found.setdefault("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    found.setdefault("KUBERNETES_SERVICE_PORT", "443")
    return found
