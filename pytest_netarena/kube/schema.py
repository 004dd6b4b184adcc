"""Lazy access to the kubernetes-validate schemas: definitions, patch strategies, strict type checks."""

from __future__ import annotations

import functools
import json
import os
import re

from .errors import ApiError, bad_request

REF_PREFIX = "#/$defs/"


@functools.lru_cache(maxsize=1)
def schema_dir() -> str:
    try:
        import kubernetes_validate
    except ImportError as error:  # pragma: no cover - dependency missing
        raise ApiError(500, "InternalError",
                       "the kubernetes-validate package is needed for OpenAPI and validation "
                       "(pip install kubernetes-validate)") from error
    root = os.path.join(os.path.dirname(kubernetes_validate.__file__), "kubernetes-json-schema")
    versions = [d for d in os.listdir(root) if re.fullmatch(r"v1\.\d+\.\d+-local", d)]
    versions.sort(key=lambda d: tuple(int(x) for x in d[1:-6].split(".")))
    from .kubectl import kubectl_minor_or_none

    minor = kubectl_minor_or_none()
    preferred = [d for d in versions if minor is not None and d.startswith(f"v1.{minor}.")]
    return os.path.join(root, (preferred or versions)[-1])


@functools.lru_cache(maxsize=1)
def definitions() -> dict[str, dict]:
    with open(os.path.join(schema_dir(), "_definitions.json"), encoding="utf-8") as handle:
        return json.load(handle)["$defs"]


def ref_name(schema: dict) -> str | None:
    ref = schema.get("$ref")
    if ref and ref.startswith(REF_PREFIX):
        return ref[len(REF_PREFIX):]
    return None


def resolve(schema: dict | None) -> dict:
    """Follow $ref (and a one-element allOf) to the schema that has properties/items."""
    seen = 0
    while schema is not None and seen < 10:
        name = ref_name(schema)
        if name is None and len(schema.get("allOf", [])) == 1:
            name = ref_name(schema["allOf"][0])
        if name is None:
            return schema
        schema = definitions().get(name, {})
        seen += 1
    return schema or {}


def child(schema: dict | None, key: str) -> dict | None:
    """Schema of field key in object schema (or of the values of a map)."""
    if schema is None:
        return None
    schema = resolve(schema)
    props = schema.get("properties")
    if props is not None and key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        return extra
    return None


def items(schema: dict | None) -> dict | None:
    if schema is None:
        return None
    schema = resolve(schema)
    return schema.get("items")


def kind_schema(definition: str) -> dict | None:
    return definitions().get(definition)


def _types(schema: dict) -> set[str]:
    declared = schema.get("type")
    if declared is None:
        return set()
    return {declared} if isinstance(declared, str) else set(declared)


# Strict decoding, as the apiserver does with fieldValidation=Strict: unknown fields and wrong
# JSON types are 400s whose text matches what kubectl users know.
_GO_TYPES = {"integer": "int32", "number": "float64", "string": "string", "boolean": "bool",
             "object": "map[string]interface {}", "array": "[]interface {}"}


def _json_type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def strict_check(kind: str, api_version: str, definition: str, obj: dict, unknown_fields: bool = True) -> None:
    root = kind_schema(definition)
    if root is None:
        return
    unknown: list[str] = []
    prefix = f"{kind} in version \"{api_version.split('/')[-1]}\" cannot be handled as a {kind}: "

    def mistyped(value, path: str, go_struct: str, go_type: str) -> ApiError:
        return bad_request(prefix + f"json: cannot unmarshal {_json_type(value)} into Go struct field "
                           f"{go_struct}.{path} of type {go_type}")

    def walk(value, schema: dict, path: str, go_struct: str) -> None:
        target = resolve(schema)
        types = _types(target)
        if value is None:
            return
        if "x-kubernetes-int-or-string" in target or target.get("format") == "int-or-string":
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                raise mistyped(value, path, go_struct, "intstr.IntOrString")
            return
        if not types:
            return
        if "integer" in types or "number" in types:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                go_type = "int32" if target.get("format") in (None, "int32") else target.get("format")
                if "number" in types and "integer" not in types:
                    go_type = "float64"
                raise mistyped(value, path, go_struct, go_type)
            return
        if "string" in types:
            if not isinstance(value, str):
                raise mistyped(value, path, go_struct, "string")
            return
        if "boolean" in types:
            if not isinstance(value, bool):
                raise mistyped(value, path, go_struct, "bool")
            return
        if "array" in types:
            if not isinstance(value, list):
                raise mistyped(value, path, go_struct, f"[]{go_struct}")
            item_schema = target.get("items") or {}
            for element in value:
                walk(element, item_schema, f"{path}", go_struct)
            return
        if "object" in types:
            if not isinstance(value, dict):
                raise mistyped(value, path, go_struct, go_struct)
            props = target.get("properties")
            extra = target.get("additionalProperties")
            name = ref_name(schema) or ref_name((schema.get("allOf") or [{}])[0]) or ""
            struct = name.rsplit(".", 1)[-1] or go_struct
            for key, sub in value.items():
                sub_path = f"{path}.{key}" if path else key
                if props is not None and key in props:
                    walk(sub, props[key], sub_path, struct)
                elif isinstance(extra, dict):
                    walk(sub, extra, path, struct)  # Go names the map field, not the key
                elif props is not None and extra is not True and unknown_fields:
                    unknown.append(sub_path)

    walk(obj, root, "", kind)
    if unknown:
        fields = ", ".join(f'unknown field "{u}"' for u in unknown)
        raise bad_request(prefix + f"strict decoding error: {fields}")


def patch_meta(schema: dict | None) -> tuple[str, str]:
    """(strategy, merge key) declared on a list field schema."""
    if schema is None:
        return "", ""
    return schema.get("x-kubernetes-patch-strategy", ""), schema.get("x-kubernetes-patch-merge-key", "")
