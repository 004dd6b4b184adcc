"""CustomResourceDefinitions (apiextensions.k8s.io/v1): defaults, validation, status, and the resources they serve."""

from __future__ import annotations

import re

from .registry import CRD_GROUP
from .registry import crd_spec as _spec
from .validation import Cause, bad_value, forbidden, required, unsupported

#: the finalizer a real server puts on every CRD: its objects are deleted before it goes
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
SCHEMA_TYPES = ("array", "boolean", "integer", "number", "object", "string")
DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
PROTECTED = re.compile(r"(^|\.)(k8s\.io|kubernetes\.io)$")
APPROVAL = "api-approved.kubernetes.io"


def apply_defaults(crd: dict) -> None:
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")
    spec.setdefault("conversion", {"strategy": "None"})
    finalizers = crd["metadata"].setdefault("finalizers", [])
    if CLEANUP_FINALIZER not in finalizers and not crd["metadata"].get("deletionTimestamp"):
        finalizers.append(CLEANUP_FINALIZER)


def validate(crd: dict) -> list[Cause]:
    spec, meta = _spec(crd), crd.get("metadata") or {}
    causes: list[Cause] = []
    group, names = spec.get("group"), spec.get("names") if isinstance(spec.get("names"), dict) else {}
    if not group:
        causes.append(required("spec.group"))
    elif "." not in str(group):
        causes.append(bad_value("spec.group", group, "should be a domain with at least one dot"))
    elif PROTECTED.search(str(group)) and not (meta.get("annotations") or {}).get(APPROVAL):
        causes.append(required(f"metadata.annotations[{APPROVAL}]",
                               f'protected groups must have approval annotation "{APPROVAL}", see '
                               "https://github.com/kubernetes/enhancements/pull/1111"))
    plural, kind = names.get("plural"), names.get("kind")
    if plural and group and meta.get("name") != f"{plural}.{group}":
        causes.append(bad_value("metadata.name", meta.get("name", ""), 'must be spec.names.plural+"."+spec.group'))
    if spec.get("scope") not in ("Cluster", "Namespaced"):
        causes.append(unsupported("spec.scope", spec.get("scope", ""), ("Cluster", "Namespaced")))
    for field in ("plural", "singular"):
        value = names.get(field)
        if not value and field == "plural":
            causes.append(required("spec.names.plural"))
        elif value and not DNS_LABEL.match(str(value)):
            causes.append(bad_value(f"spec.names.{field}", value, "a lowercase RFC 1123 label must consist of lower "
                                    "case alphanumeric characters or '-', and must start and end with an "
                                    "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                                    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"))
    if not kind:
        causes.append(required("spec.names.kind"))
    return causes + _versions(spec.get("versions"))


def _versions(versions) -> list[Cause]:
    if not isinstance(versions, list) or not versions:
        return [bad_value("spec.versions", versions or [], "must have exactly one version marked as storage version")]
    causes: list[Cause] = []
    storage = [v for v in versions if isinstance(v, dict) and v.get("storage")]
    if len(storage) != 1:
        causes.append(bad_value("spec.versions", [v.get("name") for v in versions if isinstance(v, dict)],
                                "must have exactly one version marked as storage version"))
    seen = set()
    for i, version in enumerate(versions):
        where = f"spec.versions[{i}]"
        if not isinstance(version, dict):
            causes.append(bad_value(where, version, "must be an object"))
            continue
        name = version.get("name")
        if not name:
            causes.append(required(f"{where}.name"))
        elif not DNS1035.match(str(name)) or len(str(name)) > 63:
            causes.append(bad_value(f"{where}.name", name, "a DNS-1035 label must consist of lower case alphanumeric "
                                    "characters or '-', start with an alphabetic character, and end with an "
                                    "alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                                    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"))
        elif name in seen:
            causes.append((f"{where}.name", "FieldValueDuplicate", f'Duplicate value: "{name}"'))
        seen.add(name)
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict):
            causes.append(required(f"{where}.schema.openAPIV3Schema", "schemas are required"))
        else:
            causes += _structural(schema, f"{where}.schema.openAPIV3Schema", root=True)
        for j, column in enumerate(version.get("additionalPrinterColumns") or []):
            causes += _column(column, f"{where}.additionalPrinterColumns[{j}]")
    if not any(isinstance(v, dict) and v.get("served") for v in versions):
        causes.append(bad_value("spec.versions", [v.get("name") for v in versions if isinstance(v, dict)],
                                "must have at least one version marked as served"))
    return causes


def _structural(schema: dict, where: str, root: bool = False) -> list[Cause]:
    """A structural schema: every node that is specified has a type (unless it preserves unknown fields or is
    int-or-string), and the type is one OpenAPI knows."""
    causes: list[Cause] = []
    kind = schema.get("type")
    loose = schema.get("x-kubernetes-preserve-unknown-fields") or schema.get("x-kubernetes-int-or-string")
    if not kind and not loose:
        causes.append(required(f"{where}.type", "must not be empty at the root" if root
                               else "must not be empty for specified object fields" if schema.get("properties")
                               else "must not be empty for specified fields"))
    elif kind and kind not in SCHEMA_TYPES:
        causes.append(unsupported(f"{where}.type", kind, SCHEMA_TYPES))
    elif root and kind != "object":
        causes.append(bad_value(f"{where}.type", kind, "must be object at the root"))
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            causes += _structural(sub, f"{where}.properties[{name}]")
    items = schema.get("items")
    if isinstance(items, dict):
        causes += _structural(items, f"{where}.items")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        if schema.get("properties"):
            causes.append(forbidden(f"{where}.additionalProperties", "additionalProperties and properties are "
                                    "mutual exclusive"))
        causes += _structural(extra, f"{where}.additionalProperties")
    return causes


def _column(column, where: str) -> list[Cause]:
    if not isinstance(column, dict):
        return [bad_value(where, column, "must be an object")]
    causes = []
    if not column.get("name"):
        causes.append(required(f"{where}.name"))
    if column.get("type") not in COLUMN_TYPES:
        causes.append(unsupported(f"{where}.type", column.get("type", ""), COLUMN_TYPES))
    if not column.get("jsonPath"):
        causes.append(required(f"{where}.jsonPath"))
    return causes


def validate_update(old: dict, new: dict) -> list[Cause]:
    causes = []
    old_spec, new_spec = _spec(old), _spec(new)
    for field in ("group", "scope"):
        if old_spec.get(field) != new_spec.get(field):
            causes.append(bad_value(f"spec.{field}", new_spec.get(field), "field is immutable"))
    if (old_spec.get("names") or {}).get("plural") != (new_spec.get("names") or {}).get("plural"):
        causes.append(bad_value("spec.names.plural", (new_spec.get("names") or {}).get("plural"),
                                "field is immutable"))
    stored = set((old.get("status") or {}).get("storedVersions") or [])
    listed = {v.get("name") for v in new_spec.get("versions") or [] if isinstance(v, dict)}
    for gone in sorted(stored - listed):
        causes.append(bad_value("status.storedVersions", sorted(stored), f'must appear in spec.versions: "{gone}"'))
    return causes


def establish(crd: dict, old: dict | None, now: str) -> None:
    """The status the naming and establishing controllers write: names accepted, established, stored versions."""
    spec = _spec(crd)
    status = dict(old.get("status") or {}) if old is not None else {}
    names = {k: v for k, v in (spec.get("names") or {}).items() if v}
    previous = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}

    def condition(kind: str, reason: str, message: str) -> dict:
        kept = previous.get(kind)
        if kept and kept.get("status") == "True" and kept.get("reason") == reason:
            return kept
        return {"type": kind, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message}

    conditions = [condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                  condition("Established", "InitialNamesAccepted", "the initial names have been accepted")]
    if crd["metadata"].get("deletionTimestamp"):
        conditions.append(condition("Terminating", "InstanceDeletionInProgress",
                                    "CustomResource deletion is in progress"))
    storage = next((v.get("name") for v in spec.get("versions") or [] if isinstance(v, dict) and v.get("storage")), None)
    stored = list(status.get("storedVersions") or [])
    if storage and storage not in stored:
        stored.append(storage)
    crd["status"] = {"acceptedNames": names, "conditions": conditions, "storedVersions": stored}


def is_custom_key(key: str) -> bool:
    """A store key of custom objects (plural.group) rather than a built-in plural."""
    return "." in key


CRD_API_VERSION = f"{CRD_GROUP}/v1"
