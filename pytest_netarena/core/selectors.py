"""Kubernetes label selectors matched one way for kube/ and netpol/: what a selector selects, failing closed.

A requirement whose operator is not one of Kubernetes' four, or a selector too malformed to read,
matches no labels: whatever slipped past validation selects nothing rather than everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
#: the operator of a requirement read from a malformed selector: it matches nothing
MALFORMED = "Malformed"


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        return False  # an unknown operator selects nothing


@dataclass(frozen=True)
class LabelSelector:
    """A selector as requirements, all of which must hold; the empty selector matches everything."""

    requirements: tuple[Requirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(requirement.matches(labels) for requirement in self.requirements)


MATCH_ALL = LabelSelector()
_MATCH_NONE = LabelSelector((Requirement("", MALFORMED),))


def selector_from_labels(labels: Mapping[str, str]) -> LabelSelector:
    """The equality selector of a map (a Service's `spec.selector`, a selector's `matchLabels`)."""
    return LabelSelector(tuple(Requirement(k, "In", frozenset([v])) for k, v in sorted(labels.items())))


def selector_from_dict(raw: Any) -> LabelSelector:
    """A metav1.LabelSelector as stored, read without validating it: None or {} selects everything,
    and any part that cannot be read (a non-string key or value, values that are not a list) selects nothing."""
    if not raw:
        return MATCH_ALL
    if not isinstance(raw, Mapping):
        return _MATCH_NONE
    match_labels, expressions = raw.get("matchLabels") or {}, raw.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        return _MATCH_NONE
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in match_labels.items()):
        return _MATCH_NONE
    requirements = list(selector_from_labels(match_labels).requirements)
    for expression in expressions:
        key = expression.get("key") if isinstance(expression, Mapping) else None
        values = (expression.get("values") or []) if isinstance(expression, Mapping) else None
        if not isinstance(key, str) or not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            return _MATCH_NONE
        requirements.append(Requirement(key, str(expression.get("operator")), frozenset(values)))
    return LabelSelector(tuple(requirements))


def selector_matches(raw: Any, labels: Mapping[str, str] | None) -> bool:
    """Whether a stored metav1.LabelSelector (matchLabels and matchExpressions) selects these labels."""
    return selector_from_dict(raw).matches(labels)
