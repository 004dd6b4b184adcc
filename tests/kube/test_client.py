"""The official kubernetes Python client round-trips create/list/patch/delete/watch against the server."""

from __future__ import annotations

import threading

import pytest

kubernetes = pytest.importorskip("kubernetes")


@pytest.fixture
def api(cluster):
    from kubernetes import client, config

    config.load_kube_config(config_file=cluster.kubeconfig_path)
    return client


def test_version_and_crud_round_trip(api, cluster):
    assert api.VersionApi().get_code().minor == cluster.version_info()["minor"]
    core, apps = api.CoreV1Api(), api.AppsV1Api()
    core.create_namespaced_config_map("default", {"metadata": {"name": "cfg", "labels": {"a": "1"}},
                                                  "data": {"k": "v"}})
    names = [cm.metadata.name for cm in core.list_namespaced_config_map("default", label_selector="a=1").items]
    assert names == ["cfg"]
    patched = core.patch_namespaced_config_map("cfg", "default", {"data": {"k2": "v2"}})
    assert patched.data == {"k": "v", "k2": "v2"}
    json_patched = core.patch_namespaced_config_map("cfg", "default", [{"op": "remove", "path": "/data/k"}])
    assert json_patched.data == {"k2": "v2"}
    body = {"metadata": {"name": "api"}, "spec": {
        "replicas": 2, "selector": {"matchLabels": {"app": "api"}},
        "template": {"metadata": {"labels": {"app": "api"}},
                     "spec": {"containers": [{"name": "api", "image": "example/api:1"}]}}}}
    apps.create_namespaced_deployment("default", body)
    assert apps.read_namespaced_deployment_status("api", "default").status.ready_replicas == 2
    assert len(core.list_namespaced_pod("default", label_selector="app=api").items) == 2
    scale = apps.patch_namespaced_deployment_scale("api", "default", {"spec": {"replicas": 3}})
    assert scale.spec.replicas == 3
    apps.delete_namespaced_deployment("api", "default")
    assert core.list_namespaced_pod("default").items == []
    with pytest.raises(api.exceptions.ApiException) as error:
        core.read_namespaced_config_map("nope", "default")
    assert error.value.status == 404


def test_watch_streams_changes(api, cluster):
    from kubernetes import watch

    core = api.CoreV1Api()
    seen: list[tuple[str, str]] = []
    ready = threading.Event()

    start_rv = core.list_namespaced_config_map("default").metadata.resource_version

    def consume():
        stream = watch.Watch().stream(core.list_namespaced_config_map, "default", timeout_seconds=3,
                                      resource_version=start_rv)
        ready.set()
        for event in stream:
            seen.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                break

    thread = threading.Thread(target=consume)
    thread.start()
    ready.wait(5)
    core.create_namespaced_config_map("default", {"metadata": {"name": "w1"}})
    core.patch_namespaced_config_map("w1", "default", {"data": {"a": "b"}})
    core.delete_namespaced_config_map("w1", "default")
    thread.join(10)
    assert seen == [("ADDED", "w1"), ("MODIFIED", "w1"), ("DELETED", "w1")]


def test_dynamic_client_discovery(api, cluster):
    from kubernetes import dynamic

    dyn = dynamic.DynamicClient(api.ApiClient())
    netpols = dyn.resources.get(api_version="networking.k8s.io/v1", kind="NetworkPolicy")
    netpols.create(namespace="default", body={"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                                              "metadata": {"name": "deny"}, "spec": {"podSelector": {}}})
    assert [p.metadata.name for p in netpols.get(namespace="default").items] == ["deny"]
    assert cluster.get_object("NetworkPolicy", "default", "deny")["spec"]["policyTypes"] == ["Ingress"]
