"""Incremental matrices and the fast comparison paths give exactly what a full recomputation gives."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pytest_netarena.apps.k8s.faults import FAULT_TYPES, NoEffectiveFault, apply_fault, draw_faults
from pytest_netarena.apps.k8s.matrix import OfflineMatrix, aligned, intended_matrix, mismatches
from pytest_netarena.apps.k8s.workloads.model import online_boutique
from pytest_netarena.apps.k8s.workloads.load import load_app
from pytest_netarena.apps.k8s.protected import FingerprintCache
from pytest_netarena.apps.k8s.report import flow_violations, mismatch_report
from pytest_netarena.core.catalogue import RandomChooser


@pytest.mark.parametrize("spec", ["online-boutique", "synthetic:25:3"])
def test_an_incrementally_updated_matrix_equals_a_fresh_one(spec):
    app = load_app(spec)
    live = OfflineMatrix(app)
    healthy = app.healthy_policies()
    live.matrix(healthy)
    drawer = OfflineMatrix(app)
    rng = random.Random(7)
    policies = healthy
    changed = 0
    for step in range(30):
        if step % 4 == 3:
            policies = healthy  # back to healthy, as a reset does
        else:
            try:
                fault = draw_faults(app, [rng.choice(FAULT_TYPES)], RandomChooser(step), drawer)[0]
            except NoEffectiveFault:
                continue
            if fault["policy"] in policies:
                policies = apply_fault(policies, fault)
        if rng.random() < 0.2 and len(policies) > 1:  # a deleted policy
            gone = rng.choice(sorted(policies))
            policies = {name: p for name, p in policies.items() if name != gone}
        incremental = live.matrix(policies)
        fresh = OfflineMatrix(app).matrix(policies)
        assert incremental == fresh
        assert list(incremental) == list(app.flows())  # same flows, same order
        changed += incremental != intended_matrix(app)
    assert changed > 5  # the sequence really moved the matrix


def _scrambled(matrix):
    """The same verdicts under equal but distinct Flow objects, in another order (a backend's own dict)."""
    items = [(replace(flow), value) for flow, value in matrix.items()]
    random.Random(1).shuffle(items)
    return dict(items)


def test_comparisons_give_the_same_answers_whether_or_not_the_matrices_are_aligned():
    app = online_boutique()
    intent = intended_matrix(app)
    flows = list(intent)
    before = dict(intent)
    after = dict(intent)
    for flow in flows[:5]:
        before[flow] = not intent[flow]
    for flow in flows[3:12]:
        after[flow] = not intent[flow]
    assert aligned(intent, before, after)
    assert not aligned(intent, _scrambled(after))
    assert not aligned(intent, {flow: False for flow in flows[:-1]})

    wrong = mismatches(intent, after)
    assert wrong == flows[3:12]
    assert mismatches(intent, _scrambled(after)) == wrong
    report = mismatch_report(intent, after, limit=4)
    assert report == mismatch_report(intent, _scrambled(after), limit=4)
    assert report.startswith("Connectivity check: 9 of 121 flows mismatch the intent.")
    assert report.endswith("... and 5 more mismatches")
    violations = flow_violations(intent, before, after)
    assert len(violations) == 7  # flows 5..11 matched before and not after; 3 and 4 were already wrong
    assert violations == flow_violations(intent, _scrambled(before), _scrambled(after))
    # A missing flow reads as blocked, as before.
    partial = {flow: value for flow, value in after.items() if flow != flows[0]}
    assert mismatch_report(intent, partial) == mismatch_report(intent, {**partial, flows[0]: False})


def test_healthy_view_shares_the_manifests_and_healthy_policies_copies_them():
    app = online_boutique()
    view = app.healthy_view()
    assert sorted(view) == sorted(app.healthy_policies())
    assert all(view[name] is policy for name, policy in zip(sorted(view), app.policies))
    with pytest.raises(TypeError):
        view["frontend"] = {}  # type: ignore[index]
    copies = app.healthy_policies()
    assert copies == dict(view) and all(copies[name] is not view[name] for name in view)
    assert app.flows() is app.flows()


def test_a_listing_of_the_same_objects_reuses_its_fingerprints_and_a_replaced_one_is_recomputed():
    cache = FingerprintCache()
    objects = [{"metadata": {"name": f"p{i}", "namespace": "ns", "uid": f"u{i}", "resourceVersion": "1"},
                "spec": {"x": i}} for i in range(3)]
    first = cache.of_listing("Pod", objects)
    assert cache.of_listing("Pod", list(objects)) is first
    replaced = [*objects[:2], {**objects[2], "spec": {"x": 99},
                               "metadata": {**objects[2]["metadata"], "resourceVersion": "2"}}]
    second = cache.of_listing("Pod", replaced)
    assert second["Pod ns/p2"] != first["Pod ns/p2"] and second["Pod ns/p0"] == first["Pod ns/p0"]
    assert cache.of_listing("Pod", objects[:2]) == {k: v for k, v in first.items() if k != "Pod ns/p2"}
