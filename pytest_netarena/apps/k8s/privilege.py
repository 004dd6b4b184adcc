"""Least privilege of an episode's final policies: flows they admit beyond the healthy (intended) ones."""

from __future__ import annotations

from typing import Any

from .matrix import MatrixChecker
from .workloads.model import AppSpec

METRIC = "overly_permissive"
EXAMPLES = 3

_REFERENCES: dict[tuple[int, str], tuple[AppSpec, tuple]] = {}


def _reference(app: AppSpec, namespace: str) -> tuple:
    from ...netpol import compile_policy

    entry = _REFERENCES.get((id(app), namespace))
    if entry is None or entry[0] is not app:
        entry = _REFERENCES[(id(app), namespace)] = (app, tuple(compile_policy(p, namespace) for p in app.policies))
    return entry[1]


def excess(checker: MatrixChecker, app: AppSpec, limit: int = EXAMPLES) -> list[Any] | None:
    """Up to `limit` flows (netpol.privilege.Excess) the checker's current policies admit and the
    app's healthy policies do not; None when the checker holds no reading yet."""
    from ...netpol.privilege import wider_than

    model = checker.model
    if model is None:
        return None
    return wider_than(model.pods.values(), model.namespaces, _reference(app, checker.namespace),
                      model.policies.values(), limit)


def admits_more(backend: Any, app: AppSpec) -> bool:
    """Whether the backend's latest reading admits any flow the healthy policies do not (False when the backend
    keeps no engine model to tell)."""
    checker = backend.policy_checker()
    return isinstance(checker, MatrixChecker) and bool(excess(checker, app, limit=1))


def judge_privilege(backend: Any, app: AppSpec, correct: bool = True) -> tuple[dict[str, bool | None], str]:
    """(metrics, detail) for a Judgement, from the backend's latest reading (observe() first).

    The measure is a property of a fix: for a final state that is not correct it is not applicable
    (None, shown as n/a), since a broken state may admit more than the intent without any change by
    the agent. A backend that measures by probing alone keeps no engine model: then nothing is recorded."""
    checker = backend.policy_checker()
    if not isinstance(checker, MatrixChecker) or checker.model is None:
        return {}, ""
    if not correct:
        return {METRIC: None}, ""
    found = excess(checker, app)
    if found is None:
        return {}, ""
    detail = ("the policies admit more than the intent (overly permissive), e.g. " + "; ".join(map(str, found))
              if found else "")
    return {METRIC: bool(found)}, detail
