"""guard.py tells which kubectl verbs an action runs (understanding only: the box is the defence)."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s.guard import kubectl_verbs, mutates


@pytest.mark.parametrize("script,verbs,writes", [
    ("kubectl get networkpolicy -o yaml", ["get"], False),
    ("kubectl -n default --request-timeout 5s get pods | grep Running", ["get"], False),
    ("kubectl get networkpolicy -o json | jq . && kubectl delete networkpolicy x", ["get", "delete"], True),
    ("cat <<EOF | kubectl apply -f -\nkind: NetworkPolicy\nEOF", ["apply"], True),
    ("NS=default kubectl patch networkpolicy a --type=json -p '[]'  # fix", ["patch"], True),
    # kubectl reads "get" as the timeout value and runs `config view` (the old deny-list saw a get)
    ("kubectl --request_timeout get config view", ["config"], False),
    ("echo kubectl delete pods", [], False),
])
def test_verbs_and_whether_an_action_writes(script, verbs, writes):
    assert kubectl_verbs(script) == verbs
    assert mutates(script) is writes
