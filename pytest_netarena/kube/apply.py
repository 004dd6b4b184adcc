"""managedFields and server-side apply: who owns which field, an applier's conflicts, and what it stops owning."""

from __future__ import annotations

import copy

from . import errors
from . import fieldpaths as fp
from . import schema as sch
from .tables import timestamp

Key = tuple[str, str, str]  # (manager, operation, subresource)


def root_schema(res) -> dict | None:
    if res.custom is not None:
        return res.custom.schema or None
    return sch.kind_schema(res.definition) if res.definition else None


def owners(obj: dict) -> dict[Key, tuple[str, set]]:
    """(manager, operation, subresource) -> (apiVersion, paths) of an object's managedFields."""
    out: dict[Key, tuple[str, set]] = {}
    for entry in obj["metadata"].get("managedFields") or []:
        if not isinstance(entry, dict) or entry.get("fieldsType", "FieldsV1") != "FieldsV1":
            continue
        key = (str(entry.get("manager", "")), str(entry.get("operation", "Update")), str(entry.get("subresource", "")))
        out[key] = (str(entry.get("apiVersion", "")), fp.decode(entry.get("fieldsV1") or {}))
    return out


def _entries(table: dict[Key, tuple[str, set]], old: dict | None, touched: Key) -> list[dict]:
    """managedFields of table, in the old order, the touched entry stamped now."""
    previous = {(e.get("manager", ""), e.get("operation", "Update"), e.get("subresource", "")): e
                for e in ((old or {}).get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)}
    entries = []
    for key, (api_version, paths) in table.items():
        if not paths:
            continue
        manager, operation, subresource = key
        stamp = timestamp() if key == touched or key not in previous else previous[key].get("time")
        entry = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": stamp,
                 "fieldsType": "FieldsV1", "fieldsV1": fp.encode(paths)}
        if subresource:
            entry["subresource"] = subresource
        entries.append(entry)
    return entries


def _leaves(paths: set) -> set:
    parents = {p[:i] for p in paths for i in range(1, len(p))}
    return {p for p in paths if p not in parents}


def _fields(res, obj: dict, subresource: str) -> set:
    return set(_values(res, obj, subresource))


def _values(res, obj: dict, subresource: str) -> dict:
    """The fields (path -> value) a write to subresource may own of obj."""
    values = fp.field_values(obj, root_schema(res), skip_status=subresource != "status")
    if subresource == "status":
        return {p: v for p, v in values.items() if p[0] == ("f", "status")}
    if subresource == "scale":
        return {p: v for p, v in values.items() if p == (("f", "spec"), ("f", "replicas"))}
    return values


def track(res, old: dict | None, new: dict, manager: str, subresource: str = "") -> None:
    """Set new's managedFields after an update (old None: a create) by manager: it owns what it changed, and the
    others lose it. A request that sets managedFields itself (a client moving its fields) is taken as it is."""
    requested = new["metadata"].get("managedFields")
    previous = (old or {}).get("metadata", {}).get("managedFields")
    if requested and requested != previous:
        return
    after = _values(res, new, subresource)
    before = _values(res, old, subresource) if old is not None and requested != [] else {}
    leaves = _leaves(set(after))
    changed = {p for p, value in after.items() if p not in before or (p in leaves and before[p] != value)}
    changed |= before.keys() - after.keys()
    if old is not None and not changed:  # a no-op update leaves managedFields (and their times) as they were
        if previous is None:
            new["metadata"].pop("managedFields", None)
        else:
            new["metadata"]["managedFields"] = previous
        return
    table = owners(old) if old is not None and requested != [] else {}
    for key, (api_version, paths) in list(table.items()):
        table[key] = (api_version, paths - changed)
    key = (manager, "Update", subresource)
    mine = table.get(key, ("", set()))[1]
    table[key] = (new["apiVersion"], (mine | (changed & after.keys())) & after.keys())
    new["metadata"]["managedFields"] = _entries(table, old, key)


def conflict(res, name: str, clashes: dict[tuple[str, str, str], list]) -> errors.ApiError:
    """409 as the real server words an apply's conflicts ((manager, subresource, apiVersion) -> paths)."""
    count = sum(len(paths) for paths in clashes.values())
    causes, parts = [], []
    for (manager, subresource, api_version), paths in clashes.items():
        texts = sorted(fp.text(p) for p in paths)
        label = f'conflict with "{manager}"' + (f' with subresource "{subresource}"' if subresource else "") + \
            (f" using {api_version}" if api_version else "")
        causes += [{"reason": "FieldManagerConflict", "message": label, "field": t} for t in texts]
        if count == 1:
            parts.append(f"{label}: {texts[0]}")
        else:
            parts.append(label.replace("conflict with", "conflicts with") + ":\n" + "\n".join(f"- {t}" for t in texts))
    message = f"Apply failed with {count} conflict{'s' if count > 1 else ''}: " + "\n".join(parts)
    details = {"name": name, "kind": res.plural, "causes": causes}
    if res.group:
        details["group"] = res.group
    return errors.ApiError(409, "Conflict", message, details)


def apply(res, live: dict | None, applied: dict, manager: str, force: bool) -> dict:
    """The object after manager applies its configuration to live (None: it does not exist yet), managedFields
    included; 409 when a field it sets to another value belongs to another manager and force is off."""
    schema = root_schema(res)
    mine = _fields(res, applied, "")
    key = (manager, "Apply", "")
    if live is None:
        result = copy.deepcopy(applied)
        result.setdefault("metadata", {})["managedFields"] = _entries({key: (applied["apiVersion"], mine)}, None, key)
        return result
    table = owners(live)
    clashes: dict[tuple[str, str, str], list] = {}
    taken: set = set()
    for other, (api_version, paths) in table.items():
        if other == key:
            continue
        for path in mine & paths:
            if path in _leaves(mine) and fp.value_at(live, path, schema) != fp.value_at(applied, path, schema):
                clashes.setdefault((other[0], other[2], api_version), []).append(path)
                taken.add(path)
    if clashes and not force:
        raise conflict(res, live["metadata"]["name"], clashes)
    result = fp.merge(live, {k: v for k, v in applied.items() if k != "metadata"}, schema)
    result["metadata"] = fp.merge(live["metadata"], {k: v for k, v in (applied.get("metadata") or {}).items()
                                                     if k not in fp.SERVER_FIELDS},
                                  (schema or {}).get("properties", {}).get("metadata") if schema else None)
    others = set().union(*(paths for k, (_, paths) in table.items() if k != key)) if table else set()
    dropped = table.get(key, ("", set()))[1] - mine - others
    for path in sorted(p for p in dropped if not any(p[:i] in dropped for i in range(1, len(p)))):
        fp.remove(result, path, schema)  # the outermost dropped field goes with what it holds
    for other, (api_version, paths) in list(table.items()):
        if other != key:
            table[other] = (api_version, paths - (taken if force else set()))
    table[key] = (applied["apiVersion"], mine)
    result["metadata"]["managedFields"] = _entries(table, live, key)
    return result
