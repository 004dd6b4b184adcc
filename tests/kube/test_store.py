"""The Python-side store API, snapshot/reset, listeners, lifecycle and timing."""

from __future__ import annotations

import http.client
import json
import threading
import time

from pytest_netarena.kube import EmbeddedAPIServer

from .conftest import WEB


def _deploy(name: str, replicas: int = 1, labels: dict | None = None) -> dict:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": f"example/{name}:1",
                                                           "ports": [{"containerPort": 8080, "name": "http"}]}]}}}}


def test_store_api_snapshot_and_reset():
    server = EmbeddedAPIServer()
    for i in range(12):
        server.apply_object(_deploy(f"svc{i}"))
        server.apply_object({"apiVersion": "v1", "kind": "Service", "metadata": {"name": f"svc{i}", "namespace": "shop"},
                             "spec": {"selector": {"app": f"svc{i}"}, "ports": [{"port": 80, "targetPort": "http"}]}})
    pods = server.list_objects("Pod", "shop")
    assert len(pods) == 12 and all(p["status"]["phase"] == "Running" for p in pods)
    assert len({p["status"]["podIP"] for p in pods}) == 12
    slices = server.list_objects("EndpointSlice", "shop")
    assert len(slices) == 12 and slices[0]["ports"] == [{"name": "", "port": 8080, "protocol": "TCP"}]
    server.snapshot()
    baseline_rv = server.resource_version
    server.apply_object({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": "deny", "namespace": "shop"}, "spec": {"podSelector": {}}})
    assert server.resource_version > baseline_rv
    assert server.delete_object("Deployment", "shop", "svc0")
    assert len(server.list_objects("Pod", "shop")) == 11
    server.reset()  # its speed is measured by benchmarks/kube.py, never asserted here
    assert server.get_object("NetworkPolicy", "shop", "deny") is None
    assert server.list_objects("Pod", "shop") == pods
    again = server.apply_object(_deploy("svc0"))  # unchanged apply: no write
    assert again["metadata"]["resourceVersion"] == server.get_object("Deployment", "shop", "svc0")["metadata"]["resourceVersion"]
    assert server.delete_object("ConfigMap", "shop", "missing") is False


def test_listener_sees_changes_outside_the_lock():
    server = EmbeddedAPIServer()
    events = []

    def listener(event_type, plural, obj):
        acquired = server.store.lock.acquire(blocking=False)
        events.append((event_type, plural, acquired))
        if acquired:
            server.store.lock.release()

    server.add_listener(listener)
    server.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    server.snapshot()
    server.reset()
    assert ("ADDED", "configmaps", True) in events and ("RESET", "", True) in events


def test_start_stop_and_watch_ends_at_stop(tmp_path):
    server = EmbeddedAPIServer().start()  # start-up time is measured in benchmarks/kube.py
    server.wait_ready()
    server.write_kubeconfig(tmp_path / "kubeconfig")
    assert json.loads(tmp_path.joinpath("kubeconfig").read_text())["clusters"][0]["cluster"]["server"] == server.url
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    connection.request("GET", "/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=60")
    response = connection.getresponse()
    assert response.status == 200
    body: list[bytes] = []
    reader = threading.Thread(target=lambda: body.append(response.read()))
    reader.start()
    time.sleep(0.1)
    stopped = time.perf_counter()
    server.stop()
    reader.join(5)
    assert not reader.is_alive() and time.perf_counter() - stopped < 3


def test_watch_table_events_for_kubectl_get_w(cluster):
    connection = http.client.HTTPConnection("127.0.0.1", cluster.port, timeout=10)
    connection.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
                       headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    response = connection.getresponse()
    cluster.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}, "data": {"a": "b"}})
    lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    assert all(line["type"] == "ADDED" and line["object"]["kind"] == "Table" for line in lines)
    rows = [line["object"]["rows"][0]["cells"][:2] for line in lines]
    assert ["t", 1] in rows and ["kube-root-ca.crt", 1] in rows  # every namespace holds the cluster CA too


def test_yaml_fixture_loads_with_apply_object(cluster):
    import yaml

    for doc in yaml.safe_load_all(WEB):
        cluster.apply_object(doc)
    assert len(cluster.list_objects("Pod", "default")) == 2
    assert cluster.get_object("Endpoints", "default", "web")["subsets"][0]["ports"] == [{"port": 8080, "protocol": "TCP"}]


def test_a_committer_sees_each_requests_writes_as_they_left_the_store_and_nothing_after_removal():
    server = EmbeddedAPIServer()
    seen = []

    def committer(events):  # under the store lock: what it lists is what the writes left
        seen.append(([(t, o["metadata"]["name"]) for t, p, o in events if p == "configmaps"],
                     [c["metadata"]["name"] for c in server.store.list("configmaps", "default")
                      if c["metadata"]["name"] != "kube-root-ca.crt"]))  # every namespace holds the cluster CA

    def configmap(name):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}}

    server.apply_object(configmap("a"))
    server.add_committer(committer)
    with server.batch():  # one transaction: one call, after both writes
        server.apply_object(configmap("b"))
        server.apply_object(configmap("c"))
    server.delete_object("ConfigMap", "default", "a")
    server.remove_committer(committer)
    server.apply_object(configmap("d"))
    assert seen == [([("ADDED", "b"), ("ADDED", "c")], ["a", "b", "c"]), ([("DELETED", "a")], ["b", "c"])]
