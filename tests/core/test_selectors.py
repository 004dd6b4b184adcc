"""One label-selector matching for kube/ and netpol/: Kubernetes semantics, and an unknown operator selects nothing."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_netarena.core.selectors import OPERATORS, LabelSelector, Requirement, selector_matches
from pytest_netarena.netpol.errors import PolicyValidationError
from pytest_netarena.netpol.selectors import compile_selector

LABELS = [{}, {"app": "web"}, {"app": "db"}, {"app": "web", "tier": "front"}, {"tier": "back"}]


@pytest.mark.parametrize("labels", LABELS)
def test_an_unknown_operator_matches_no_labels(labels):
    for operator in ("Equals", "in", "", "None", "DoesNotExists"):
        assert not Requirement("app", operator, frozenset(["web"])).matches(labels)
        assert not Requirement("other", operator).matches(labels)  # even where DoesNotExist would hold
        raw = {"matchExpressions": [{"key": "other", "operator": operator, "values": []}]}
        assert not selector_matches(raw, labels)


@pytest.mark.parametrize("raw", [
    "app=web",  # not an object
    {"matchLabels": ["app", "web"]},
    {"matchLabels": {"app": 1}},
    {"matchExpressions": {"key": "app"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": "web"}]},  # a string is not a list of values
    {"matchExpressions": [{"key": ["app"], "operator": "Exists"}]},
    {"matchExpressions": ["app"]},
])
@pytest.mark.parametrize("labels", LABELS)
def test_a_selector_too_malformed_to_read_selects_nothing(raw, labels):
    assert not selector_matches(raw, labels)


@pytest.mark.parametrize("labels", LABELS)
def test_the_four_operators_and_match_labels(labels):
    app, tier = labels.get("app"), labels.get("tier")
    assert selector_matches(None, labels) and selector_matches({}, labels)
    assert selector_matches({"matchLabels": {"app": "web"}}, labels) == (app == "web")
    expressions = {
        "In": app in ("web", "db"), "NotIn": app not in ("web", "db"),
        "Exists": app is not None, "DoesNotExist": app is None,
    }
    for operator, expected in expressions.items():
        values = ["web", "db"] if operator in ("In", "NotIn") else []
        raw = {"matchExpressions": [{"key": "app", "operator": operator, "values": values}]}
        assert selector_matches(raw, labels) == expected, (operator, labels)
    both = {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    assert selector_matches(both, labels) == (app == "web" and tier is not None)


keys = st.sampled_from(["app", "tier", "team"])
values = st.sampled_from(["a", "b", "c"])
expressions = st.builds(
    lambda key, operator, chosen: {"key": key, "operator": operator,
                                   "values": sorted(chosen) if operator in ("In", "NotIn") else []},
    keys, st.sampled_from(OPERATORS), st.sets(values, min_size=1, max_size=2))
raw_selectors = st.builds(lambda labels, exprs: {"matchLabels": labels, "matchExpressions": exprs},
                          st.dictionaries(keys, values, max_size=2), st.lists(expressions, max_size=3))


@given(raw_selectors, st.dictionaries(keys, values, max_size=3))
def test_kube_and_netpol_read_a_valid_selector_alike(raw, labels):
    """kube matches stored selectors as they are; netpol validates them first: the verdicts agree."""
    compiled = compile_selector(raw, "spec.podSelector", lambda path, message: PolicyValidationError("p", path, message))
    assert isinstance(compiled, LabelSelector)
    assert compiled.matches(labels) == selector_matches(raw, labels)


def test_kube_string_selectors_mean_the_same():
    pytest.importorskip("kubernetes_validate")
    from pytest_netarena.kube.selectors import parse_labels

    cases = {
        "app=web": [False, True, False, True, False],
        "app==web": [False, True, False, True, False],
        "app!=web": [True, False, True, False, True],
        "app in (web,db)": [False, True, True, True, False],
        "app notin (web)": [True, False, True, False, True],
        "tier": [False, False, False, True, True],
        "!tier": [True, True, True, False, False],
        "app=web,tier in (front)": [False, False, False, True, False],
    }
    for text, expected in cases.items():
        assert [parse_labels(text).matches(labels) for labels in LABELS] == expected, text
    assert all(parse_labels("").matches(labels) for labels in LABELS)
