"""Server-side patches: strategic merge (driven by the schema's patch metadata), JSON merge, JSON patch."""

from __future__ import annotations

import copy
import json

from . import limits
from . import schema as sch
from .errors import ApiError, bad_request, patch_failed


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        limits.spend()
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


# -- JSON patch (RFC 6902) -------------------------------------------------------------------------
def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", f"the server rejected our request due to an error in our request: "
                       f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts: list[str]):
    for part in parts:
        if isinstance(doc, list):
            doc = doc[_index(doc, part, False)]
        elif isinstance(doc, dict):
            doc = doc[part]
        else:
            raise KeyError(part)
    return doc


def _index(lst: list, part: str, adding: bool) -> int:
    if part == "-" and adding:
        return len(lst)
    if not part.isdigit():
        raise KeyError(part)
    index = int(part)
    if index > len(lst) or (index == len(lst) and not adding):
        raise KeyError(part)
    return index


def json_patch(doc, operations) -> dict:
    """RFC 6902 within a real server's bounds: at most 10,000 operations, and `copy` operations adding
    at most 3 MiB in all, so no patch doubles the object op after op (each op is also a CPU checkpoint)."""
    if not isinstance(operations, list):
        raise bad_request("json patch must be a list of operations")
    limits.check_json_patch(operations)
    doc = copy.deepcopy(doc)
    copied = 0
    for op in operations:
        limits.spend()
        try:
            kind = op["op"]
            parts = _pointer(op["path"])
            if kind in ("add", "replace"):
                value = copy.deepcopy(op["value"])
            elif kind == "test":
                value = op["value"]
            elif kind == "copy":
                text = limits.compact_json(_walk(doc, _pointer(op["from"])))  # the copy, priced as it is made
                copied += len(text)
                if copied > limits.MAX_COPY_BYTES:
                    raise patch_failed(f"Unable to complete the copy, the accumulated size increase of copy is "
                                       f"{copied}, exceeding the limit {limits.MAX_COPY_BYTES}")
                value = json.loads(text)
            elif kind == "move":
                source = _pointer(op["from"])
                value = _walk(doc, source)  # detached below, so it needs no copy
                doc = _remove(doc, source)
            if kind == "remove":
                doc = _remove(doc, parts)
            elif kind == "test":
                if _walk(doc, parts) != value:
                    raise ApiError(422, "Invalid", f"the server rejected our request: test operation failed at {op['path']}")
            elif kind in ("add", "move", "copy", "replace"):
                if not parts:
                    doc = value
                    continue
                parent = _walk(doc, parts[:-1])
                if isinstance(parent, list):
                    if kind == "replace":
                        parent[_index(parent, parts[-1], False)] = value
                    else:
                        parent.insert(_index(parent, parts[-1], True), value)
                elif isinstance(parent, dict):
                    if kind == "replace" and parts[-1] not in parent:
                        raise KeyError(parts[-1])
                    parent[parts[-1]] = value
                else:
                    raise KeyError(parts[-1])
            else:
                raise bad_request(f"unknown json patch operation {kind!r}")
        except (KeyError, IndexError, TypeError) as error:
            path = op.get("path") if isinstance(op, dict) else op
            raise ApiError(422, "Invalid", "the server rejected our request due to an error in our request: "
                           f"json patch operation {op.get('op') if isinstance(op, dict) else '?'} "
                           f"failed at {path}: missing {error}") from None
    return doc


def _remove(doc, parts):
    if not parts:
        return None
    parent = _walk(doc, parts[:-1])
    if isinstance(parent, list):
        del parent[_index(parent, parts[-1], False)]
    else:
        del parent[parts[-1]]
    return doc


# -- strategic merge patch -------------------------------------------------------------------------
def strategic_merge(target: dict, patch: dict, root_schema: dict | None) -> dict:
    if not isinstance(patch, dict):
        raise bad_request("strategic merge patch body must be a JSON object")
    return _merge_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, root_schema)


def _merge_map(target: dict, patch: dict, schema: dict | None) -> dict:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: _strip(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None  # type: ignore[return-value]
    retain = patch.get("$retainKeys")
    orders = {}
    for key, value in patch.items():
        limits.spend()
        if key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$setElementOrder/"):
            orders[key.split("/", 1)[1]] = value
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(target.get(field), list):
                gone = _Members(value if isinstance(value, list) else [value])
                target[field] = [v for v in target[field] if v not in gone]
            continue
        field_schema = sch.child(schema, key)
        if value is None:
            target.pop(key, None)
        elif isinstance(value, dict):
            current = target.get(key)
            merged = _merge_map(current if isinstance(current, dict) else {}, value, field_schema)
            if merged is None:
                target.pop(key, None)
            else:
                target[key] = merged
        elif isinstance(value, list):
            target[key] = _merge_list(target.get(key), value, field_schema)
        else:
            target[key] = value
    for field, order in orders.items():
        if isinstance(target.get(field), list):
            target[field] = _apply_order(target[field], order, sch.child(schema, field))
    if isinstance(retain, list):
        for key in list(target):
            if key not in retain:
                del target[key]
    return target


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [_strip(v) for v in value if not (isinstance(v, dict) and "$patch" in v and len(v) == 1)]
    return value


def _merge_list(current, patch: list, schema: dict | None) -> list:
    strategy, key = sch.patch_meta(schema)
    if "merge" not in strategy.split(","):
        return [_strip(v) for v in patch if not (isinstance(v, dict) and v.get("$patch"))]
    if any(isinstance(v, dict) and v.get("$patch") == "replace" for v in patch):
        return [_strip(v) for v in patch if not (isinstance(v, dict) and v.get("$patch"))]
    result = list(current) if isinstance(current, list) else []
    if not key:  # primitive list with merge strategy: set union
        present = _Members(result)
        for value in patch:
            if value not in present:
                result.append(value)
                present.add(value)
        return result
    item_schema = sch.items(schema)
    for element in patch:
        limits.spend()  # each element scans the list: quadratic in what the request sends
        if not isinstance(element, dict):
            raise bad_request(f"map: {element!r} does not contain declared merge key: {key}")
        if key not in element:
            raise bad_request(f"map: {element!r} does not contain declared merge key: {key}")
        match = next((i for i, existing in enumerate(result)
                      if isinstance(existing, dict) and existing.get(key) == element[key]), None)
        if element.get("$patch") == "delete":
            if match is not None:
                del result[match]
            continue
        if match is None:
            result.append(_merge_map({}, element, item_schema))
        else:
            result[match] = _merge_map(copy.deepcopy(result[match]), element, item_schema)
    return result


class _Members:
    """Membership among JSON values: hashed where it can be, else a scan within the request's CPU time."""

    def __init__(self, items=()) -> None:
        self._hashed: set = set()
        self._other: list = []
        for item in items:
            self.add(item)

    def add(self, item) -> None:
        try:
            self._hashed.add(item)
        except TypeError:  # an object or a list: equal to no hashable value
            self._other.append(item)

    def __contains__(self, item) -> bool:
        try:
            return item in self._hashed
        except TypeError:
            limits.spend()
            return item in self._other


def _apply_order(values: list, order: list, schema: dict | None) -> list:
    _, key = sch.patch_meta(schema)

    def ident(v):
        return v.get(key) if key and isinstance(v, dict) else v

    wanted = [o.get(key) if key and isinstance(o, dict) else o for o in order]
    ranked = {w: i for i, w in enumerate(wanted)}
    named = [v for v in values if ident(v) in ranked]
    named.sort(key=lambda v: ranked[ident(v)])
    rest = [v for v in values if ident(v) not in ranked]
    return named + rest
