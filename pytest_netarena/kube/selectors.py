"""Label and field selector parsing and matching (the query-string forms kubectl sends)."""

from __future__ import annotations

import re

from .errors import bad_request

_REQ = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(==|=|!=|\s+in\s+|\s+notin\s+)\s*(.*?))?\s*$")


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current)
    return parts


def parse_labels(text: str | None):
    """A list of (key, op, values) requirements; op in =, !=, in, notin, exists, !exists."""
    if not text:
        return []
    reqs = []
    for part in _split_top(text):
        match = _REQ.match(part)
        if match is None:
            raise bad_request(f"unable to parse requirement: {part.strip()!r}")
        negate, key, op, value = match.groups()
        if op is None:
            reqs.append((key, "!exists" if negate else "exists", []))
            continue
        op = op.strip()
        if op in ("in", "notin"):
            value = value.strip()
            if not (value.startswith("(") and value.endswith(")")):
                raise bad_request(f"unable to parse requirement: found '{value}', expected: '('")
            values = [v.strip() for v in value[1:-1].split(",") if v.strip()]
            reqs.append((key, op, values))
        else:
            reqs.append((key, "!=" if op == "!=" else "=", [value]))
    return reqs


def labels_match(reqs, labels: dict | None) -> bool:
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        if op == "exists" and not present:
            return False
        if op == "!exists" and present:
            return False
        if op == "=" and labels.get(key) != values[0]:
            return False
        if op == "!=" and present and labels.get(key) == values[0]:
            return False
        if op == "in" and labels.get(key) not in values:
            return False
        if op == "notin" and present and labels.get(key) in values:
            return False
    return True


def parse_fields(text: str | None):
    if not text:
        return []
    reqs = []
    for part in text.split(","):
        if not part.strip():
            continue
        match = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if match is None:
            raise bad_request(f"invalid selector: '{part}'; can't understand '{part}'")
        key, op, value = match.groups()
        reqs.append((key, op != "!=", value))
    return reqs


def _path(obj: dict, dotted: str) -> str:
    value = obj
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return ""
        value = value.get(part)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def fields_match(reqs, obj: dict) -> bool:
    for key, equal, value in reqs:
        if (_path(obj, key) == value) != equal:
            return False
    return True


def selector_matches(selector: dict | None, labels: dict | None) -> bool:
    """A metav1.LabelSelector (matchLabels + matchExpressions) against labels; None/{} matches all."""
    if not selector:
        return True
    labels = labels or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def selector_string(selector: dict | None) -> str:
    """The text form kubectl shows and sends (app=x,tier in (a,b))."""
    if not selector:
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        op, key, values = expr.get("operator"), expr.get("key"), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(sorted(values))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)
