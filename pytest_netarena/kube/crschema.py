"""A custom object against its CRD's structural schema: pruned, defaulted and validated as a real server does.

Unknown fields are dropped (or refused when the request is strict); the messages are the real server's.
"""

from __future__ import annotations

import copy
import json
import re

from .validation import Cause, bad_value, required, unsupported

#: fields every object has whatever its schema says (metadata is checked as ObjectMeta elsewhere)
ROOT_FIELDS = ("apiVersion", "kind", "metadata")
_GO_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
             "object": "object", "array": "array"}


def _type_of(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _keeps_unknown(schema: dict) -> bool:
    return bool(schema.get("x-kubernetes-preserve-unknown-fields"))


def prune(obj: dict, schema: dict) -> list[str]:
    """Remove the fields the schema does not specify, in place; returns their paths (for a strict request)."""
    dropped: list[str] = []
    for key in list(obj):
        if key in ROOT_FIELDS:
            continue
        sub = (schema.get("properties") or {}).get(key)
        if sub is None and not _keeps_unknown(schema):
            dropped.append(key)
            del obj[key]
        elif isinstance(sub, dict):
            _prune_value(obj[key], sub, key, dropped)
    return dropped


def _prune_value(value, schema: dict, path: str, dropped: list[str]) -> None:
    if isinstance(value, dict):
        if schema.get("x-kubernetes-embedded-resource"):
            return
        props, extra = schema.get("properties"), schema.get("additionalProperties")
        for key in list(value):
            sub = (props or {}).get(key)
            if sub is None and isinstance(extra, dict):
                sub = extra
            if sub is None:
                if extra is True or _keeps_unknown(schema):
                    continue
                dropped.append(f"{path}.{key}")
                del value[key]
            else:
                _prune_value(value[key], sub, f"{path}.{key}", dropped)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            _prune_value(item, schema["items"], f"{path}[{index}]", dropped)


def default(value, schema: dict):
    """value with the schema's defaults filled in where fields are absent (objects only; in place)."""
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if not isinstance(sub, dict):
                continue
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                default(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key in value:
                if key not in (schema.get("properties") or {}):
                    default(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            default(item, schema["items"])
    return value


def validate(obj: dict, schema: dict) -> list[Cause]:
    causes: list[Cause] = []
    for key, sub in (schema.get("properties") or {}).items():
        if key in ROOT_FIELDS or not isinstance(sub, dict):
            continue
        if key in obj:
            _check(obj[key], sub, key, causes)
    for key in schema.get("required") or []:
        if key not in obj:
            causes.append(required(key))
    return causes


def _quote(value) -> str:
    return json.dumps(value) if isinstance(value, str) else _go(value)


def _go(value) -> str:
    """How Go's %v prints a decoded JSON value in these messages."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value is None:
        return "null"
    return str(value)


def _check(value, schema: dict, path: str, causes: list[Cause]) -> None:
    if value is None:
        if not schema.get("nullable"):
            causes.append(bad_value(path, "null", f"{path} in body must be of type {schema.get('type', 'object')}: "
                                    '"null"'))
        return
    if schema.get("x-kubernetes-int-or-string"):
        if _type_of(value) not in ("integer", "string"):
            causes.append(bad_value(path, _type_of(value), f"{path} in body must be of type int-or-string: "
                                    f'"{_type_of(value)}"'))
            return
    elif schema.get("type"):
        wanted, actual = schema["type"], _type_of(value)
        if not (wanted == actual or (wanted == "number" and actual == "integer")):
            causes.append(bad_value(path, actual, f"{path} in body must be of type {_GO_TYPES.get(wanted, wanted)}: "
                                    f'"{actual}"'))
            return
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        causes.append(unsupported(path, value, [_go(e) if not isinstance(e, str) else e for e in enum]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, schema, path, causes)
    elif isinstance(value, str):
        _string(value, schema, path, causes)
    elif isinstance(value, list):
        _array(value, schema, path, causes)
    elif isinstance(value, dict):
        _object(value, schema, path, causes)


def _number(value, schema: dict, path: str, causes: list[Cause]) -> None:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None:
        if schema.get("exclusiveMinimum") and value <= low:
            causes.append(bad_value(path, value, f"{path} in body should be greater than {_go(low)}"))
        elif value < low:
            causes.append(bad_value(path, value, f"{path} in body should be greater than or equal to {_go(low)}"))
    if high is not None:
        if schema.get("exclusiveMaximum") and value >= high:
            causes.append(bad_value(path, value, f"{path} in body should be less than {_go(high)}"))
        elif value > high:
            causes.append(bad_value(path, value, f"{path} in body should be less than or equal to {_go(high)}"))
    step = schema.get("multipleOf")
    if step and (value / step) != int(value / step):
        causes.append(bad_value(path, value, f"{path} in body should be a multiple of {_go(step)}"))


def _string(value: str, schema: dict, path: str, causes: list[Cause]) -> None:
    longest, shortest = schema.get("maxLength"), schema.get("minLength")
    if longest is not None and len(value) > longest:
        causes.append((path, "FieldValueTooLong", f"Too long: may not be more than {longest} bytes"))
    if shortest is not None and len(value) < shortest:
        causes.append(bad_value(path, value, f"{path} in body should be at least {shortest} chars long"))
    pattern = schema.get("pattern")
    if pattern:
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            matched = True  # a pattern Go reads and Python does not: not this object's fault
        if not matched:
            causes.append(bad_value(path, value, f"{path} in body should match '{pattern}'"))


def _array(value: list, schema: dict, path: str, causes: list[Cause]) -> None:
    most, least = schema.get("maxItems"), schema.get("minItems")
    if most is not None and len(value) > most:
        causes.append((path, "FieldValueTooMany", f"Too many: {len(value)}: must have at most {most} items"))
    if least is not None and len(value) < least:
        causes.append(bad_value(path, len(value), f"{path} in body should have at least {least} items"))
    items = schema.get("items") if isinstance(schema.get("items"), dict) else None
    for index, item in enumerate(value):
        if items is not None:
            _check(item, items, f"{path}[{index}]", causes)
    list_type = schema.get("x-kubernetes-list-type")
    if schema.get("uniqueItems") or list_type == "set":
        seen = []
        for index, item in enumerate(value):
            if item in seen:
                causes.append((f"{path}[{index}]", "FieldValueDuplicate", f"Duplicate value: {_quote(item)}"))
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen = []
        for index, item in enumerate(value):
            key = {k: item.get(k) for k in keys} if isinstance(item, dict) else item
            if key in seen:
                causes.append((f"{path}[{index}]", "FieldValueDuplicate", f"Duplicate value: "
                               f"{json.dumps(key, separators=(',', ':'))}"))
            seen.append(key)


def _object(value: dict, schema: dict, path: str, causes: list[Cause]) -> None:
    props, extra = schema.get("properties") or {}, schema.get("additionalProperties")
    for key, item in value.items():
        sub = props.get(key)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if isinstance(sub, dict) and not schema.get("x-kubernetes-embedded-resource"):
            _check(item, sub, f"{path}.{key}", causes)
    for key in schema.get("required") or []:
        if key not in value:
            causes.append(required(f"{path}.{key}"))
    most, least = schema.get("maxProperties"), schema.get("minProperties")
    if most is not None and len(value) > most:
        causes.append((path, "FieldValueTooMany", f"Too many: {len(value)}: must have at most {most} items"))
    if least is not None and len(value) < least:
        causes.append(bad_value(path, len(value), f"{path} in body should have at least {least} properties"))
