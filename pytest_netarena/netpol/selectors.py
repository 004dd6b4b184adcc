"""Label selectors in NetworkPolicies: validation and a canonical hashable form (matching is core/selectors.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..core.selectors import MATCH_ALL, OPERATORS, LabelSelector, Requirement

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def label_key_problem(key: object) -> str | None:
    """Why `key` is not a valid label key (optional DNS prefix + '/' + name), or None."""
    if not isinstance(key, str) or not key:
        return "label key must be a non-empty string"
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return f"invalid label key {key!r}: prefix must be a DNS subdomain"
    if len(name) > 63 or not _NAME.match(name):
        return f"invalid label key {key!r}: name must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
    return None


def label_value_problem(value: object) -> str | None:
    """Why `value` is not a valid label value (empty is allowed), or None."""
    if not isinstance(value, str):
        return f"label value {value!r} must be a string"
    if value and (len(value) > 63 or not _NAME.match(value)):
        return f"invalid label value {value!r}: at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
    return None


def compile_selector(raw: Any, path: str, fail: Callable[[str, str], Exception]) -> LabelSelector:
    """Validate a metav1.LabelSelector dict and return its canonical form.

    `fail(path, message)` builds the exception to raise, so callers control its type and context.
    A `None` selector is treated as empty here; callers decide when "missing" means something else.
    """
    if raw is None:
        return MATCH_ALL
    if not isinstance(raw, dict):
        raise fail(path, f"must be a label selector object, not {type(raw).__name__}")
    unknown = set(raw) - {"matchLabels", "matchExpressions"}
    if unknown:
        raise fail(path, f"unknown field(s) {sorted(unknown)}")
    requirements: set[Requirement] = set()
    match_labels = raw.get("matchLabels") or {}
    if not isinstance(match_labels, dict):
        raise fail(f"{path}.matchLabels", "must be a map of label keys to values")
    for key, value in match_labels.items():
        problem = label_key_problem(key) or label_value_problem(value)
        if problem:
            raise fail(f"{path}.matchLabels", problem)
        requirements.add(Requirement(key, "In", frozenset([value])))
    expressions = raw.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise fail(f"{path}.matchExpressions", "must be a list")
    for index, expression in enumerate(expressions):
        requirements.add(_compile_expression(expression, f"{path}.matchExpressions[{index}]", fail))
    return LabelSelector(tuple(sorted(requirements, key=lambda r: (r.key, r.operator, sorted(r.values)))))


def _compile_expression(raw: Any, path: str, fail: Callable[[str, str], Exception]) -> Requirement:
    if not isinstance(raw, dict):
        raise fail(path, "must be an object with key, operator and values")
    key, operator, values = raw.get("key"), raw.get("operator"), raw.get("values")
    problem = label_key_problem(key)
    if problem:
        raise fail(f"{path}.key", problem)
    if operator not in OPERATORS:
        raise fail(f"{path}.operator", f"unknown operator {operator!r} (expected one of {', '.join(OPERATORS)})")
    if values is not None and not isinstance(values, list):
        raise fail(f"{path}.values", "must be a list of strings")
    values = values or []
    if operator in ("In", "NotIn") and not values:
        raise fail(f"{path}.values", f"must be non-empty when operator is {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise fail(f"{path}.values", f"must be empty when operator is {operator}")
    for value in values:
        problem = label_value_problem(value)
        if problem:
            raise fail(f"{path}.values", problem)
    return Requirement(str(key), operator, frozenset(values))  # key: a str, label_key_problem checked


def describe(selector: LabelSelector) -> str:
    """kubectl-like text: `app=web,tier notin (db),!legacy`; `<all>` for the empty selector."""
    if selector.is_empty:
        return "<all>"
    parts = []
    for r in selector.requirements:
        values = ",".join(sorted(r.values))
        if r.operator == "In":
            parts.append(f"{r.key}={values}" if len(r.values) == 1 else f"{r.key} in ({values})")
        elif r.operator == "NotIn":
            parts.append(f"{r.key} notin ({values})")
        elif r.operator == "Exists":
            parts.append(r.key)
        else:
            parts.append(f"!{r.key}")
    return ",".join(parts)
