"""The fault catalogue: every category's draws change the matrix, deterministically, with no no-op parts."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.faults import (
    ADD_INGRESS, CHANGE_PORT, LEVELS, apply_fault, categories, draw_faults)
from pytest_netarena.apps.k8s.matrix import OfflineMatrix, intended_matrix
from pytest_netarena.apps.k8s.workloads.model import online_boutique
from pytest_netarena.apps.k8s.workloads.load import load_app
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.catalogue import HypothesisChooser, RandomChooser

CATEGORIES = categories()


def test_levels_follow_the_issue():
    names = {c.level: [c.name for c in CATEGORIES if c.level == c.level] for c in CATEGORIES}
    assert len(LEVELS[1]) == 5 and len(LEVELS[2]) == 6 and len(LEVELS[3]) == 4
    assert "change_port+add_egress" in [c.name for c in CATEGORIES if c.level == 3]
    assert "remove_ingress+add_egress" not in [c.name for c in CATEGORIES if c.level == 2]
    assert names


def _check_sequence(app, faults, offline):
    intent = intended_matrix(app)
    policies, matrix = app.healthy_policies(), intent
    for fault in faults:
        before = policies[fault["policy"]]
        if fault["type"] == CHANGE_PORT:
            assert all(p["port"] != fault["new_port"] for r in before["spec"]["ingress"] for p in r.get("ports", []))
        policies = apply_fault(policies, fault)
        new = offline.matrix(policies)
        assert new != matrix, f"{fault} changed nothing"
        if fault["type"] == ADD_INGRESS:  # no already-allowed source
            for app_name in fault["apps"]:
                assert any(not ok for f, ok in matrix.items() if f.source == app_name and
                           f.service == fault["policy"])
        matrix = new
    assert matrix != intent


@pytest.mark.parametrize("category", CATEGORIES, ids=lambda c: c.name)
def test_every_category_breaks_the_matrix(category):
    app = online_boutique()
    offline = OfflineMatrix(app)
    for seed in range(12):
        faults = draw_faults(app, category.name.split("+"), RandomChooser(seed), offline)
        assert [f["type"] for f in faults] == category.name.split("+")
        _check_sequence(app, faults, offline)


def test_generation_is_a_pure_function_of_the_seed():
    options = RunOptions(seed=42, queries=2)
    first = [(q.id, q.params) for q in APP.generate(options)]
    assert first == [(q.id, q.params) for q in APP.generate(options)]
    assert first != [(q.id, q.params) for q in APP.generate(RunOptions(seed=43, queries=2))]
    assert len(first) == 2 * 15 and first[0][0] == "k8s-L1-add_egress-0000"


def test_synthetic_app_draws_break_its_matrix():
    app = load_app("synthetic:30")
    offline = OfflineMatrix(app)
    for category in CATEGORIES:
        faults = draw_faults(app, category.name.split("+"), RandomChooser(7), offline)
        _check_sequence(app, faults, offline)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(CATEGORIES))
def test_hypothesis_draws_break_the_matrix_too(data, category):
    app = online_boutique()
    offline = OfflineMatrix(app)
    faults = draw_faults(app, category.name.split("+"), HypothesisChooser(data.draw), offline)
    _check_sequence(app, faults, offline)
