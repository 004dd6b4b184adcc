"""Strategic merge patch directives as kubectl sends them, plus merge and JSON patch basics."""

from __future__ import annotations

import pytest

from pytest_netarena.kube import errors, patch, schema

DEPLOY = {"spec": {"replicas": 1, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
                   "template": {"spec": {"containers": [
                       {"name": "api", "image": "a:1", "env": [{"name": "MODE", "value": "x"}],
                        "ports": [{"containerPort": 8080}]},
                       {"name": "sidecar", "image": "s:1"}]}}}}


def _smp(target, body):
    return patch.strategic_merge(target, body, schema.kind_schema("io.k8s.api.apps.v1.Deployment"))


def test_delete_directive_and_set_element_order():
    result = _smp(DEPLOY, {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "api"}],
        "containers": [{"image": "a:2", "name": "api"}, {"$patch": "delete", "name": "sidecar"}]}}}})
    containers = result["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["api"] and containers[0]["image"] == "a:2"
    assert containers[0]["env"] == [{"name": "MODE", "value": "x"}]
    assert DEPLOY["spec"]["template"]["spec"]["containers"][1]["name"] == "sidecar"  # input untouched


def test_retain_keys_and_null_deletes():
    result = _smp(DEPLOY, {"metadata": {"labels": None},
                           "spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}})
    assert result["spec"]["strategy"] == {"type": "Recreate"}


def test_merge_by_key_and_reorder():
    result = _smp(DEPLOY, {"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "sidecar"}, {"name": "api"}],
        "containers": [{"name": "api", "$setElementOrder/env": [{"name": "MODE"}, {"name": "NEW"}],
                        "env": [{"name": "NEW", "value": "y"}]}]}}}})
    containers = result["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["sidecar", "api"]
    assert [e["name"] for e in containers[1]["env"]] == ["MODE", "NEW"]


def test_lists_without_strategy_are_replaced():
    policy = {"spec": {"ingress": [{"from": [{"podSelector": {}}]}, {"ports": [{"port": 80}]}]}}
    result = patch.strategic_merge(policy, {"spec": {"ingress": [{"ports": [{"port": 81}]}]}},
                                   schema.kind_schema("io.k8s.api.networking.v1.NetworkPolicy"))
    assert result["spec"]["ingress"] == [{"ports": [{"port": 81}]}]


def test_missing_merge_key_is_a_bad_request():
    with pytest.raises(errors.ApiError) as error:
        _smp(DEPLOY, {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}})
    assert error.value.code == 400


def test_merge_and_json_patch():
    assert patch.merge_patch({"a": {"b": 1, "c": 2}}, {"a": {"b": None, "d": 3}}) == {"a": {"c": 2, "d": 3}}
    doc = {"a": [1, 2], "b": {"c": 1}}
    assert patch.json_patch(doc, [{"op": "add", "path": "/a/-", "value": 3},
                                  {"op": "move", "from": "/b/c", "path": "/d"},
                                  {"op": "test", "path": "/d", "value": 1}]) == {"a": [1, 2, 3], "b": {}, "d": 1}
    with pytest.raises(errors.ApiError) as error:
        patch.json_patch(doc, [{"op": "replace", "path": "/zzz", "value": 1}])
    assert error.value.code == 422
