"""The healthy app: fixtures load, the engine-derived intent equals the intent stated in issue 4."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s.matrix import intended_matrix
from pytest_netarena.apps.k8s.workloads.model import Flow, online_boutique
from pytest_netarena.apps.k8s.workloads.load import load_app
from pytest_netarena.core.errors import UsageError

# Issue 4, "The healthy application": who may call whom (frontend is open to every workload).
CALLERS = {
    "adservice": {"frontend"},
    "cartservice": {"frontend", "checkoutservice"},
    "checkoutservice": {"frontend"},
    "currencyservice": {"frontend", "checkoutservice"},
    "emailservice": {"checkoutservice"},
    "paymentservice": {"checkoutservice"},
    "productcatalogservice": {"frontend", "checkoutservice", "recommendationservice"},
    "recommendationservice": {"frontend"},
    "redis-cart": {"cartservice"},
    "shippingservice": {"frontend", "checkoutservice"},
}
PORTS = {"adservice": 9555, "cartservice": 7070, "checkoutservice": 5050, "currencyservice": 7000,
         "emailservice": 5000, "frontend": 80, "paymentservice": 50051, "productcatalogservice": 3550,
         "recommendationservice": 8080, "redis-cart": 6379, "shippingservice": 50051}
WORKLOADS = sorted([*PORTS, "loadgenerator"])


def test_online_boutique_has_the_issue_workloads_ports_and_policies():
    app = online_boutique()
    assert list(app.names) == WORKLOADS
    assert {w.name: w.service_ports[0].port for w in app.workloads if w.has_service} == PORTS
    assert app.workload("emailservice").service_ports[0].target_port == 8080
    assert app.workload("frontend").service_ports[0].target_port == 80 + 8000
    for workload in app.workloads:  # containerPorts match targetPorts
        assert [p for p, _ in workload.container_ports] == [sp.target_port for sp in workload.service_ports]
    assert sorted(app.healthy_policies()) == WORKLOADS
    loadgen = app.healthy_policies()["loadgenerator"]["spec"]
    assert loadgen["policyTypes"] == ["Egress"] and loadgen["egress"] == [{}]


def test_intended_matrix_derived_from_policies_equals_the_stated_intent():
    expected = {}
    for source in WORKLOADS:
        for service, port in PORTS.items():
            if service != source:
                allowed = service == "frontend" or source in CALLERS[service]
                expected[Flow(source, service, port)] = allowed
    assert intended_matrix(online_boutique()) == expected
    assert len(expected) == 121


def test_frontend_may_not_reach_email_or_payment():
    intent = intended_matrix(online_boutique())
    assert intent[Flow("frontend", "emailservice", 5000)] is False
    assert intent[Flow("frontend", "paymentservice", 50051)] is False
    assert intent[Flow("checkoutservice", "paymentservice", 50051)] is True


def test_prompt_agrees_with_the_intent():
    from pytest_netarena.apps.k8s.prompt import PROMPT

    text = PROMPT.role + PROMPT.rules + PROMPT.action_format + PROMPT.answer_format
    assert "frontend → payment" not in text and "frontend -> payment" not in text


def test_synthetic_app_is_acyclic_and_deterministic():
    app = load_app("synthetic:40")
    assert app is load_app("synthetic:40") and len(app.servers) == 40
    intent = intended_matrix(app)
    allowed = {(f.source, f.service) for f, ok in intent.items() if ok and f.service != "svc-00"}
    assert allowed and all(int(src[4:]) < int(dst[4:]) for src, dst in allowed if src.startswith("svc"))
    assert all(intent[Flow(w, "svc-00", 80)] for w in app.names if w != "svc-00")
    assert load_app("synthetic:40:1").policies != app.policies


@pytest.mark.parametrize("spec", ["synthetic:x", "synthetic:1", "bogus", "synthetic:5:1:2"])
def test_bad_app_specs_are_usage_errors(spec):
    with pytest.raises(UsageError):
        load_app(spec)
