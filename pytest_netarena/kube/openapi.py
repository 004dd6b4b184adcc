"""OpenAPI v3 documents (index and one per group-version) generated from the kubernetes-validate schemas."""

from __future__ import annotations

import functools
import hashlib
import json
import threading

from . import schema as sch
from .registry import RESOURCES, Resource

_lock = threading.Lock()
BUILTIN_GVS = frozenset((r.group, r.version) for r in RESOURCES)
REF_V3 = "#/components/schemas/"
EXTRA_DEFS = ("io.k8s.apimachinery.pkg.apis.meta.v1.Status", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
              "io.k8s.apimachinery.pkg.apis.meta.v1.Patch")
PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json",
               "application/strategic-merge-patch+json")


def gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _convert(node):
    """kubernetes-validate JSON Schema -> OpenAPI 3.0 as the apiserver publishes it."""
    if isinstance(node, list):
        return [_convert(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref":
            out[key] = REF_V3 + value[len(sch.REF_PREFIX):]
        elif key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out[key] = kinds[0] if kinds else "object"
        elif key == "properties":
            props = {}
            for name, prop in value.items():
                converted = _convert(prop)
                if name in ("apiVersion", "kind"):
                    converted.pop("enum", None)
                if "$ref" in converted and len(converted) > 1:
                    # Upstream wraps a $ref that carries a description in allOf.
                    ref = converted.pop("$ref")
                    converted = {"allOf": [{"$ref": ref}], **converted}
                props[name] = converted
            out[key] = props
        else:
            out[key] = _convert(value)
    return out


def _reachable(roots: list[str]) -> list[str]:
    defs = sch.definitions()
    seen: dict[str, None] = {}
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in defs:
            continue
        seen[name] = None
        text = json.dumps(defs[name])
        start = 0
        while True:
            index = text.find('"' + sch.REF_PREFIX, start)
            if index < 0:
                break
            end = text.find('"', index + 1)
            stack.append(text[index + 1 + len(sch.REF_PREFIX):end])
            start = end
    return sorted(seen)


def _component(name: str) -> dict:
    definition = sch.definitions()[name]
    if name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString":
        return {"type": "string", "format": "int-or-string",
                "description": "IntOrString is a type that can hold an int32 or a string."}
    if name == "io.k8s.apimachinery.pkg.api.resource.Quantity":
        return {"type": "string", "description": definition.get("description", "Quantity is a fixed-point "
                                                                 "representation of a number.")}
    return _convert(definition)


def _op(res: Resource, action: str, summary: str, body: bool, patch: bool = False, list_op: bool = False) -> dict:
    definition = definition_name(res)
    ref = {"$ref": REF_V3 + (definition + "List" if list_op else definition)}
    op = {"description": summary, "operationId": f"{action}{res.kind}",
          "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}},
                        "401": {"description": "Unauthorized"}},
          "x-kubernetes-action": action,
          "x-kubernetes-group-version-kind": {"group": res.group, "version": res.version, "kind": res.kind}}
    params = [{"name": "dryRun", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
              {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}}]
    if body:
        params.append({"name": "fieldValidation", "in": "query",
                       "description": "fieldValidation instructs the server on how to handle objects in the request "
                                      "containing unknown or duplicate fields.",
                       "schema": {"type": "string", "uniqueItems": True}})
        if patch:
            content = {media: {"schema": {"$ref": REF_V3 + "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
                       for media in PATCH_TYPES}
        else:
            content = {"*/*": {"schema": {"$ref": REF_V3 + definition}}}
        op["requestBody"] = {"content": content, "required": True}
        op["parameters"] = params
    return op


def _paths(res: Resource) -> dict:
    base = "/" + gv_path(res.group, res.version)
    collection = f"{base}/namespaces/{{namespace}}/{res.plural}" if res.namespaced else f"{base}/{res.plural}"
    item = f"{collection}/{{name}}"
    verbs = set(res.verbs)
    paths: dict = {collection: {}, item: {}}
    if "list" in verbs:
        paths[collection]["get"] = _op(res, "list", f"list or watch objects of kind {res.kind}", False,
                                       list_op=True)
    if "create" in verbs:
        paths[collection]["post"] = _op(res, "post", f"create a {res.kind}", True)
    if "get" in verbs:
        paths[item]["get"] = _op(res, "get", f"read the specified {res.kind}", False)
    if "update" in verbs:
        paths[item]["put"] = _op(res, "put", f"replace the specified {res.kind}", True)
    if "patch" in verbs:
        paths[item]["patch"] = _op(res, "patch", f"partially update the specified {res.kind}", True, patch=True)
    if "delete" in verbs:
        paths[item]["delete"] = _op(res, "delete", f"delete a {res.kind}", False)
    for path, ops in paths.items():
        params = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}] \
            if path == item else []
        if res.namespaced:
            params.append({"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}})
        ops["parameters"] = params
    return {p: o for p, o in paths.items() if len(o) > 1}


@functools.cache
def document(group: str, version: str) -> bytes:
    resources = [r for r in RESOURCES if (r.group, r.version) == (group, version) and r.definition]
    roots = [r.definition for r in resources] + [r.definition + "List" for r in resources] + list(EXTRA_DEFS)
    if group == "apps":
        roots.append("io.k8s.api.autoscaling.v1.Scale")
    names = _reachable(roots)
    paths: dict = {}
    for res in resources:
        paths.update(_paths(res))
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "unversioned"}, "paths": paths,
           "components": {"schemas": {name: _component(name) for name in names}}}
    return json.dumps(doc, separators=(",", ":")).encode()


@functools.lru_cache(maxsize=1)
def index() -> bytes:
    return json.dumps({"paths": _index_paths(dict.fromkeys((r.group, r.version) for r in RESOURCES), document)}).encode()


def _index_paths(group_versions, make) -> dict:
    paths = {}
    for group, version in group_versions:
        digest = _digest(make(group, version))
        paths[gv_path(group, version)] = {"serverRelativeURL": f"/openapi/v3/{gv_path(group, version)}?hash={digest}"}
    return paths


@functools.lru_cache(maxsize=256)
def _digest(doc: bytes) -> str:
    return hashlib.sha512(doc).hexdigest()[:128].upper()


def definition_name(res: Resource) -> str:
    """The schema name of res's objects: the built-in definition, or (custom) reversed-group.version.Kind."""
    if res.custom is None:
        return res.definition
    return ".".join(reversed(res.group.split("."))) + f".{res.version}.{res.kind}"


def index_for(registry) -> bytes:
    """The /openapi/v3 index of a server: the built-in group-versions and those its CRDs serve."""
    custom = [gv for gv in registry.group_versions() if gv not in BUILTIN_GVS]
    if not custom:
        return index()
    paths = json.loads(index())["paths"]
    paths.update(_index_paths(custom, lambda g, v: document_for(registry, g, v)[0]))
    return json.dumps({"paths": paths}).encode()


def document_for(registry, group: str, version: str) -> tuple[bytes, str]:
    """(the OpenAPI v3 document of a group-version, its ETag)."""
    if (group, version) in BUILTIN_GVS:
        doc = document(group, version)
    else:
        resources = tuple(r for r in registry.resources if (r.group, r.version) == (group, version))
        doc = _custom_document(registry.revision, group, version, resources)
    return doc, _digest(doc)[:32]


@functools.lru_cache(maxsize=64)
def _custom_document(revision, group: str, version: str, resources: tuple[Resource, ...]) -> bytes:
    """A CRD group-version's document: its objects' schemas (as the CRD gives them) with ObjectMeta."""
    meta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    names = _reachable([meta, "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta", *EXTRA_DEFS])
    schemas = {name: _component(name) for name in names}
    paths: dict = {}
    for res in resources:
        gvk = [{"group": group, "kind": res.kind, "version": version}]
        schema = json.loads(json.dumps(res.custom.schema or {"type": "object"}))
        props = schema.setdefault("properties", {})
        props["apiVersion"] = {"type": "string", "description": "APIVersion defines the versioned schema of this "
                                                                "representation of an object."}
        props["kind"] = {"type": "string", "description": "Kind is a string value representing the REST resource "
                                                          "this object represents."}
        props["metadata"] = {"allOf": [{"$ref": REF_V3 + meta}],
                             "description": "Standard object's metadata."}
        schema["type"] = "object"
        schema["x-kubernetes-group-version-kind"] = gvk
        name = definition_name(res)
        schemas[name] = schema
        schemas[name + "List"] = {
            "type": "object", "required": ["items"], "x-kubernetes-group-version-kind": [
                {"group": group, "kind": res.kind + "List", "version": version}],
            "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                           "items": {"type": "array", "items": {"$ref": REF_V3 + name}},
                           "metadata": {"allOf": [{"$ref": REF_V3 + "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"}]}}}
        paths.update(_paths(res))
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}, "paths": paths,
           "components": {"schemas": schemas}}
    return json.dumps(doc, separators=(",", ":")).encode()


def v2_stub() -> bytes:
    """An empty OpenAPI v2 document in gnostic protobuf: kubectl's fallback lookup then finds no schema
    for an unknown kind and reports `no matches for kind` as it does against a real server."""
    def field(number: int, payload: bytes) -> bytes:
        return bytes([number << 3 | 2, len(payload)]) + payload

    info = field(1, b"Kubernetes") + field(2, b"v1.0.0")
    return field(1, b"2.0") + field(2, info)
