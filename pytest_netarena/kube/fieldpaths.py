"""Field sets of objects as server-side apply sees them: paths by schema, the managedFields FieldsV1 form, merging.

A path is a tuple of elements: ("f", name) a field, ("k", keys) an item of a list keyed by its map keys (keys a
JSON object text), ("v", value) an item of a set list (value as JSON text). A schema is a built-in kind's
(kubernetes-validate definitions, $ref resolved) or a CRD's structural schema: lists are keyed where the schema
says x-kubernetes-list-type map (or set), atomic otherwise; a map or struct marked atomic is one field.
"""

from __future__ import annotations

import copy
import json

from . import schema as sch

Path = tuple
#: metadata fields the server owns: never part of a manager's set
SERVER_FIELDS = frozenset({"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                           "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"})


def _node(schema) -> dict:
    return sch.resolve(schema) if isinstance(schema, dict) else {}


def _child(schema: dict, key: str) -> tuple[dict | None, bool]:
    """(the schema of field key, whether key is a declared field rather than a map entry)."""
    props = schema.get("properties") or {}
    if key in props:
        return props[key], True
    extra = schema.get("additionalProperties")
    return (extra if isinstance(extra, dict) else None), False


def _atomic(schema: dict) -> bool:
    return schema.get("x-kubernetes-map-type") == "atomic" or schema.get("x-kubernetes-list-type") == "atomic"


def _list_kind(schema: dict) -> str:
    return schema.get("x-kubernetes-list-type") or "atomic"


def item_element(schema: dict, item) -> tuple:
    """The path element of one item of a keyed list."""
    if _list_kind(schema) == "set" or not isinstance(item, dict):
        return ("v", json.dumps(item, sort_keys=True, separators=(",", ":")))
    keys = schema.get("x-kubernetes-list-map-keys") or []
    return ("k", json.dumps({k: item.get(k) for k in keys if k in item}, sort_keys=True, separators=(",", ":")))


def field_set(obj: dict, root: dict | None, skip_status: bool = True) -> set[Path]:
    """Every field of obj a manager can own (leaves, keyed items, map entries, empty structs)."""
    return set(field_values(obj, root, skip_status))


def field_values(obj: dict, root: dict | None, skip_status: bool = True) -> dict[Path, object]:
    """field_set's paths, each with the value found there (one walk: comparing two objects costs no lookups)."""
    out: dict[Path, object] = {}
    for key, value in obj.items():
        if key in ("apiVersion", "kind") or (key == "status" and skip_status):
            continue
        child, _ = _child(_node(root), key)
        if key == "metadata":
            value = {k: v for k, v in (value or {}).items() if k not in SERVER_FIELDS}
            if not value:
                continue
        _walk(value, child, (("f", key),), out)
    return out


def _walk(value, schema, path: Path, out: dict) -> None:
    node = _node(schema)
    if isinstance(value, dict) and not _atomic(node):
        if not value:
            out[path] = value
        for key, item in value.items():
            child, declared = _child(node, key)
            _walk(item, child, path + (("f", key),), out)
            if not declared:
                out[path + (("f", key),)] = item
    elif isinstance(value, list) and _list_kind(node) in ("map", "set"):
        for item in value:
            element = path + (item_element(node, item),)
            out[element] = item
            if isinstance(item, dict) and _list_kind(node) == "map":
                _walk(item, node.get("items"), element, out)
    else:
        out[path] = value


def value_at(obj, path: Path, root: dict | None):
    """(found, value) at path in obj."""
    value, schema = obj, root
    for kind, key in path:
        node = _node(schema)
        if kind == "f":
            if not isinstance(value, dict) or key not in value:
                return False, None
            schema, _ = _child(node, key)
            value = value[key]
        else:
            if not isinstance(value, list):
                return False, None
            match = next((item for item in value if item_element(node, item) == (kind, key)), None)
            if match is None:
                return False, None
            value, schema = match, node.get("items")
    return True, value


# -- managedFields' FieldsV1 form -------------------------------------------------------------------------------
def encode(paths: set[Path]) -> dict:
    """FieldsV1: nested `f:name`, `k:{...}`, `v:...` keys; `.` marks a node that is itself in the set."""
    tree: dict = {}
    for path in sorted(paths):
        node = tree
        for kind, key in path:
            node = node.setdefault(f"{kind}:{key}", {})
        node.setdefault(".", {})
    return _prune(tree)


def _prune(tree: dict) -> dict:
    """A `.` alone is the node's own `{}`; beside children it stays."""
    out = {}
    for key, child in tree.items():
        if key == ".":
            continue
        kept = _prune(child)
        if "." in child and kept:
            kept = {".": {}, **kept}
        out[key] = kept
    return out


def decode(tree: dict, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for key, child in (tree or {}).items():
        if key == ".":
            out.add(prefix)
            continue
        kind, _, name = key.partition(":")
        path = prefix + ((kind, name),)
        if not child:
            out.add(path)
        else:
            out |= decode(child, path)
    return out


def text(path: Path) -> str:
    """A path as conflict messages print it: .spec.containers[name="web"].image."""
    out = ""
    for kind, key in path:
        if kind == "f":
            out += f".{key}"
        elif kind == "k":
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(key).items()) + "]"
        else:
            out += f"[={key}]"
    return out


# -- merging an applied configuration -----------------------------------------------------------------------------
def merge(live, applied, schema):
    """applied merged into live: maps field by field, keyed lists item by item, anything else replaced."""
    node = _node(schema)
    if isinstance(live, dict) and isinstance(applied, dict) and not _atomic(node):
        out = dict(live)
        for key, value in applied.items():
            child, _ = _child(node, key)
            out[key] = merge(live[key], value, child) if key in live else copy.deepcopy(value)
        return out
    if isinstance(live, list) and isinstance(applied, list) and _list_kind(node) in ("map", "set"):
        out = [copy.deepcopy(i) for i in live]
        index = {item_element(node, item): i for i, item in enumerate(out)}
        for item in applied:
            element = item_element(node, item)
            if element in index:
                out[index[element]] = merge(out[index[element]], item, node.get("items"))
            else:
                index[element] = len(out)
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(applied)


def remove(obj, path: Path, schema) -> None:
    """Remove the field or item at path from obj, in place (nothing when it is not there)."""
    *parents, (kind, key) = path
    value, node_schema = obj, schema
    for element in parents:
        found, value = value_at(value, (element,), node_schema)
        if not found:
            return
        node = _node(node_schema)
        node_schema = _child(node, element[1])[0] if element[0] == "f" else node.get("items")
    if kind == "f" and isinstance(value, dict):
        value.pop(key, None)
    elif isinstance(value, list):
        node = _node(node_schema)
        value[:] = [item for item in value if item_element(node, item) != (kind, key)]
