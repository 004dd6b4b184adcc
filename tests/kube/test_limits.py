"""Per-request bounds of the embedded API server: JSON Patch operations and copies, object size, CPU time,
and patches computed without the store lock (over HTTP and with the real kubectl)."""

from __future__ import annotations

import json
import threading

import pytest

from pytest_netarena.kube import patch as patches

from .conftest import call

POLICY = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
          "metadata": {"name": "api", "namespace": "default"},
          "spec": {"podSelector": {"matchLabels": {"app": "api"}}, "policyTypes": ["Ingress"],
                   "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "web"}}}],
                                "ports": [{"port": 8080, "protocol": "TCP"}]}]}}
POLICY_PATH = "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies/api"
DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}}}
JSON_PATCH = "application/json-patch+json"
#: copying spec.ingress into itself doubles it: 16 times is far past 3 MiB (and quick to refuse)
DOUBLING = [{"op": "copy", "from": "/spec/ingress", "path": "/spec/ingress/-"}] * 16


@pytest.fixture
def policy(cluster):
    cluster.apply_object(POLICY)
    return cluster.get_object("NetworkPolicy", "default", "api")


def test_a_json_patch_of_more_than_10000_operations_is_413(policy, cluster, kubectl, tmp_path):
    operations = [{"op": "test", "path": "/kind", "value": "NetworkPolicy"}] * 10_001
    code, status = call(cluster, "PATCH", POLICY_PATH, operations, JSON_PATCH)
    assert (code, status["reason"]) == (413, "RequestEntityTooLarge")
    assert status["message"] == ("Request entity too large: The allowed maximum operations in a JSON patch "
                                 "is 10000, got 10001")
    assert call(cluster, "PATCH", POLICY_PATH, operations[:10_000], JSON_PATCH)[0] == 200
    patch_file = tmp_path / "patch.json"
    patch_file.write_text(json.dumps(operations))
    refused = kubectl("patch", "networkpolicy", "api", "--type=json", f"--patch-file={patch_file}", check=False)
    assert refused.returncode != 0 and "RequestEntityTooLarge" in refused.stderr


def test_copies_adding_more_than_3_mib_are_refused_and_change_nothing(policy, cluster):
    code, status = call(cluster, "PATCH", POLICY_PATH, DOUBLING, JSON_PATCH)
    assert (code, status["reason"]) == (422, "Invalid")
    assert "the accumulated size increase of copy is" in status["message"]
    assert "exceeding the limit 3145728" in status["message"]  # the real server's 3 MiB
    assert cluster.get_object("NetworkPolicy", "default", "api") == policy
    # copies far below the limit apply as before
    copy_rule = [{"op": "copy", "from": "/spec/ingress/0", "path": "/spec/ingress/-"}] * 3
    code, patched = call(cluster, "PATCH", POLICY_PATH, copy_rule, JSON_PATCH)
    assert code == 200 and patched["spec"]["ingress"] == policy["spec"]["ingress"] * 4


def test_moves_are_not_copies(cluster):
    doc = {"a": [{"x": "y" * 1000}], "b": []}
    moves = [{"op": "move", "from": "/a/0", "path": "/b/0"}, {"op": "move", "from": "/b/0", "path": "/a/0"}] * 2000
    assert patches.json_patch(doc, moves) == doc  # 4,000 moves of a subtree never count toward the copy limit


def test_an_object_over_1_5_mib_is_refused_as_etcd_refuses_it(cluster, kubectl, tmp_path):
    path = "/api/v1/namespaces/default/configmaps"
    code, _ = call(cluster, "POST", path, {"metadata": {"name": "fits"}, "data": {"a": "x" * 1_400_000}})
    assert code == 201
    code, status = call(cluster, "POST", path, {"metadata": {"name": "big"}, "data": {"a": "x" * 2_000_000}})
    assert (code, status["message"]) == (500, "etcdserver: request is too large")
    assert "reason" not in status  # a real server has no reason for etcd's errors
    grown = {"data": {"b": "x" * 400_000}}
    code, status = call(cluster, "PATCH", path + "/fits", grown, "application/merge-patch+json")
    assert (code, status["message"]) == (500, "etcdserver: request is too large")
    assert cluster.get_object("ConfigMap", "default", "big") is None
    assert set(cluster.get_object("ConfigMap", "default", "fits")["data"]) == {"a"}
    (tmp_path / "grown.json").write_text(json.dumps(grown))
    refused = kubectl("patch", "configmap", "fits", "--type=merge", f"--patch-file={tmp_path}/grown.json",
                      check=False)
    assert refused.returncode != 0 and "etcdserver: request is too large" in refused.stderr


def test_a_request_over_its_cpu_time_is_504_and_changes_nothing(cluster, monkeypatch):
    cluster.apply_object(DEPLOY)
    before = cluster.get_object("Deployment", "default", "web")
    monkeypatch.setattr(cluster, "request_cpu_s", 0.05)
    # strategic merge by name: each new container is looked up among all before it (quadratic)
    containers = [{"name": f"c{i}", "image": "x"} for i in range(6000)]
    body = {"spec": {"template": {"spec": {"containers": containers}}}}
    code, status = call(cluster, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web", body,
                        "application/strategic-merge-patch+json")
    assert (code, status["reason"]) == (504, "Timeout")
    assert cluster.get_object("Deployment", "default", "web") == before


def test_a_patch_is_computed_without_holding_the_store_lock(policy, cluster, monkeypatch):
    """While the server computes an agent's patch, the harness can read the store."""
    free_meanwhile = []
    compute = patches.json_patch

    def observed(doc, operations):
        lock = cluster.store.lock
        probe = threading.Thread(target=lambda: free_meanwhile.append(lock.acquire(timeout=2) and not lock.release()))
        probe.start()
        probe.join()
        return compute(doc, operations)

    monkeypatch.setattr(patches, "json_patch", observed)
    replace = [{"op": "replace", "path": "/spec/ingress/0/ports/0/port", "value": 9090}]
    assert call(cluster, "PATCH", POLICY_PATH, replace, JSON_PATCH)[0] == 200
    assert free_meanwhile == [True]
    assert cluster.get_object("NetworkPolicy", "default", "api")["spec"]["ingress"][0]["ports"][0]["port"] == 9090


def test_a_write_between_read_and_store_is_never_lost(policy, cluster, monkeypatch):
    """A patch computed from a version that changed meanwhile is computed again on the new one."""
    compute = patches.json_patch
    calls = []

    def racing(doc, operations):
        calls.append(doc["metadata"]["resourceVersion"])
        if len(calls) == 1:  # another client writes while the first computation runs
            cluster.apply_object({**POLICY, "metadata": {**POLICY["metadata"], "labels": {"touched": "yes"}}})
        return compute(doc, operations)

    monkeypatch.setattr(patches, "json_patch", racing)
    replace = [{"op": "replace", "path": "/spec/ingress/0/ports/0/port", "value": 9090}]
    assert call(cluster, "PATCH", POLICY_PATH, replace, JSON_PATCH)[0] == 200
    stored = cluster.get_object("NetworkPolicy", "default", "api")
    assert len(calls) == 2 and calls[0] != calls[1]
    assert stored["metadata"]["labels"] == {"touched": "yes"}
    assert stored["spec"]["ingress"][0]["ports"][0]["port"] == 9090


def _scale(cluster, replicas: int) -> int:
    return call(cluster, "PATCH", "/apis/apps/v1/namespaces/default/deployments/web/scale",
                {"spec": {"replicas": replicas}}, "application/merge-patch+json")[0]


def test_a_scales_controller_work_stops_at_the_requests_cpu_time(cluster, monkeypatch):
    """The write stands; the pods follow with later writes, as behind a real cluster's lagging controller."""
    cluster.apply_object(DEPLOY)
    monkeypatch.setattr(cluster, "request_cpu_s", 0.05)
    assert _scale(cluster, 3000) == 200
    assert cluster.get_object("Deployment", "default", "web")["spec"]["replicas"] == 3000
    first = len(cluster.list_objects("Pod", "default"))
    assert 1 <= first < 3000
    cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later"}})  # no budget
    assert len(cluster.list_objects("Pod", "default")) == 3000


def test_pods_stop_at_the_namespace_quota(cluster, monkeypatch):
    from pytest_netarena.kube import controllers

    cluster.apply_object(DEPLOY)
    monkeypatch.setattr(controllers, "MAX_PODS_PER_NAMESPACE", 40, raising=False)
    assert _scale(cluster, 3000) == 200
    assert len(cluster.list_objects("Pod", "default")) == 40


def test_no_request_takes_a_namespace_past_8_mib_of_objects(cluster, kubectl):
    from pytest_netarena.kube.limits import MAX_NAMESPACE_BYTES

    path = "/api/v1/namespaces/default/configmaps"
    made = 0
    while made < 10:  # 1.4 MB each: the sixth passes 8 MiB (10 bounds the test on a server without the quota)
        code, status = call(cluster, "POST", path, {"metadata": {"name": f"c{made}"}, "data": {"a": "x" * 1_400_000}})
        if code != 201:
            break
        made += 1
    assert (made, code, status["reason"]) == (5, 403, "Forbidden"), status
    assert "exceeded quota: netarena-namespace-bytes" in status["message"]
    assert f"limited: bytes={MAX_NAMESPACE_BYTES}" in status["message"]
    assert cluster.get_object("ConfigMap", "default", "c5") is None
    code, _ = call(cluster, "POST", path, {"metadata": {"name": "fill"}, "data": {"a": "x" * 1_300_000}})
    assert code == 201  # what is left fits: about 8.3 of 8.4 MB
    grown = {"data": {"b": "x" * 150_000}}  # within the object's own limit, past the namespace's
    code, status = call(cluster, "PATCH", path + "/c0", grown, "application/merge-patch+json")
    assert code == 403 and "exceeded quota" in status["message"]  # an update may not grow it either
    assert set(cluster.get_object("ConfigMap", "default", "c0")["data"]) == {"a"}
    shrunk = {"data": {"a": "small"}}
    code, _ = call(cluster, "PATCH", path + "/c0", shrunk, "application/merge-patch+json")
    assert code == 200  # over the quota or not, a write that shrinks the namespace passes
    made_after = kubectl("create", "configmap", "c5", "--from-literal=a=" + "x" * 100_000, check=False)
    assert made_after.returncode == 0, made_after.stderr  # in the room the shrink made
    code, _ = call(cluster, "POST", "/api/v1/namespaces/kube-system/configmaps",
                   {"metadata": {"name": "elsewhere"}, "data": {"a": "x" * 1_400_000}})
    assert code == 201  # the quota is per namespace
    cluster.reset()
    for index in range(5):  # the snapshot's tally comes back with its objects
        code, _ = call(cluster, "POST", path, {"metadata": {"name": f"c{index}"}, "data": {"a": "x" * 1_400_000}})
        assert code == 201
