"""A write between decoding and storing: the body read as its resource, defaulted, admitted and validated.

Each step is as the real server does it for that kind, built-in or custom.
"""

from __future__ import annotations

import copy

from . import crds, crschema, defaults, errors, kinds, validation
from . import schema as sch
from .registry import Resource
from .tables import timestamp

# Kinds whose `status` a create or update ignores besides those with a status subresource (and the controllers').
STATUS_OWNED = {"Pod", "Deployment", "ReplicaSet", "Namespace", "Node", "Service", "ResourceQuota"}
#: kinds with a status subresource whose status a create still keeps (defaulted, not the client's)
STATUS_ON_CREATE = {"Service", "Namespace"}


def owns_status(res: Resource) -> bool:
    """A main-resource write of res leaves status alone (it is written through the status subresource)."""
    if res.custom is not None:
        return res.custom.status
    return res.kind in STATUS_OWNED or "status" in res.subresources


def prepare(res: Resource, namespace: str, body, name: str | None, strict: bool, check_types: bool = True) -> dict:
    """The request's object read as res: kind and apiVersion checked, types checked (unknown fields refused when
    strict; a custom object's pruned), namespace and name filled in from the URL."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body of the request must be a JSON object, got {type(body).__name__}")
    obj = copy.deepcopy(body)
    kind = obj.get("kind") or res.kind
    api_version = obj.get("apiVersion") or res.api_version
    if kind != res.kind or api_version != res.api_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version "
            f"({res.api_version})" if api_version != res.api_version else
            f"the kind in the data ({kind}) does not match the expected kind ({res.kind})")
    # Ordered like the real server prints: apiVersion, kind, metadata, ... (kubectl keeps the order).
    obj = {"apiVersion": api_version, "kind": kind, **{k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}}
    meta = obj.get("metadata")
    if meta is None:
        meta = obj["metadata"] = {}
    if not isinstance(meta, dict):
        raise errors.bad_request(f"{res.kind} in version \"{res.version}\" cannot be handled as a {res.kind}: "
                                 "metadata must be an object")
    if res.definition and check_types:
        sch.strict_check(res.kind, res.api_version, res.definition, obj, unknown_fields=strict)
    elif res.custom is not None:
        sch.strict_check(res.kind, res.api_version, "io.k8s.apimachinery.pkg.apis.meta.v1.PartialObjectMetadata",
                         {"metadata": meta}, unknown_fields=strict)
        dropped = crschema.prune(obj, res.custom.schema)
        if dropped and strict:
            fields = ", ".join(f'unknown field "{d}"' for d in dropped)
            raise errors.bad_request(f"{res.kind} in version \"{res.version}\" cannot be handled as a {res.kind}: "
                                     f"strict decoding error: {fields}")
    if res.namespaced:
        if meta.get("namespace") and namespace and meta["namespace"] != namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on "
                                     "the request")
        meta["namespace"] = meta.get("namespace") or namespace or "default"
    else:
        meta.pop("namespace", None)
    if name is not None:
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                                     f"({name})")
        meta["name"] = name
    return obj


def complete(cluster, res: Resource, obj: dict, old: dict | None) -> None:
    """Defaults, then validation, of a created (old None) or updated object, in place."""
    kind, meta = res.kind, obj["metadata"]
    if res.custom is not None:
        defaults.omit_empty(meta)
        crschema.default(obj, res.custom.schema)
        causes = validation.object_name(kind, meta) + crschema.validate(obj, res.custom.schema)
        if causes:
            raise errors.invalid(kind, res.group, meta.get("name") or "", causes)
        return
    defaults.apply_defaults(kind, obj)
    kinds.default(kind, obj)
    kinds.admit(cluster.store, res, obj, old)
    checks = kinds.VALIDATORS.get(kind)
    if checks is None:
        validation.validate(kind, res.group, obj)
        if old is not None:
            validation.validate_update(kind, res.group, old, obj)
    else:
        causes = validation.object_name(kind, meta) + checks[0](obj)
        if old is not None and not causes:
            causes = checks[1](old, obj)
        if causes:
            raise errors.invalid(kind, res.group, meta.get("name") or "", causes)
    if kind == "CustomResourceDefinition":
        crds.establish(obj, old, timestamp())
    if kind == "Pod" or (old is None and kind in WORKLOADS):
        from . import podsecurity

        podsecurity.admit(cluster.store, res, obj, old)


#: kinds with a pod template Pod Security admission warns about (it enforces on the pods they make)
WORKLOADS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"})


def finalizers_on_deletion(res: Resource, old: dict, obj: dict) -> None:
    """An object being deleted may lose finalizers, never gain one (the real server's check)."""
    if not old["metadata"].get("deletionTimestamp"):
        return
    added = [f for f in obj["metadata"].get("finalizers") or [] if f not in (old["metadata"].get("finalizers") or [])]
    if added:
        listed = ", ".join(f'"{f}"' for f in added)
        raise errors.invalid(res.kind, res.group, obj["metadata"]["name"], [validation.forbidden(
            "metadata.finalizers", f"no new finalizers can be added if the object is being deleted, found new "
                                   f"finalizers []string{{{listed}}}")])
