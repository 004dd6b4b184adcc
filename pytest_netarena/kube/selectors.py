"""Label and field selectors in the query-string forms kubectl sends: parsed here, labels matched by core/selectors.py."""

from __future__ import annotations

import re

from ..core.selectors import LabelSelector, Requirement
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


#: the string form's operators as core's requirement operators
_OPERATORS = {"=": "In", "!=": "NotIn", "in": "In", "notin": "NotIn"}


def parse_labels(text: str | None) -> LabelSelector:
    """The selector of `app=web,tier in (a,b),!legacy`; a requirement that cannot be read is 400."""
    if not text:
        return LabelSelector()
    reqs = []
    for part in _split_top(text):
        match = _REQ.match(part)
        if match is None:
            raise bad_request(f"unable to parse requirement: {part.strip()!r}")
        negate, key, op, value = match.groups()
        if op is None:
            reqs.append(Requirement(key, "DoesNotExist" if negate else "Exists"))
            continue
        op = op.strip()
        if op in ("in", "notin"):
            value = value.strip()
            if not (value.startswith("(") and value.endswith(")")):
                raise bad_request(f"unable to parse requirement: found '{value}', expected: '('")
            values = [v.strip() for v in value[1:-1].split(",") if v.strip()]
        else:
            values = [value]
        reqs.append(Requirement(key, _OPERATORS["=" if op == "==" else op], frozenset(values)))
    return LabelSelector(tuple(reqs))


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
    return all((_path(obj, key) == value) == equal for key, equal, value in reqs)


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
