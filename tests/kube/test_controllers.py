"""Incremental controllers, batched writes and the no-copy read API of the embedded server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

from pytest_netarena.kube import EmbeddedAPIServer

NS = "shop"


def _deploy(name: str, replicas: int = 1) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": f"example/{name}:1",
                                                           "ports": [{"containerPort": 8080}]}]}}}}


def _service(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": NS},
            "spec": {"selector": {"app": name}, "ports": [{"port": 80, "targetPort": 8080}]}}


def _app(names) -> list[dict]:
    return [o for name in names for o in (_deploy(name), _service(name))]


def _loaded(names=("a", "b", "c")) -> EmbeddedAPIServer:
    server = EmbeddedAPIServer()
    server.apply_objects(_app(names))
    return server


def _recording(server) -> list[tuple[str, str, str]]:
    events: list[tuple[str, str, str]] = []
    server.add_listener(lambda kind, plural, obj: events.append(
        (kind, plural, obj["metadata"]["name"] if obj else "")))
    return events


def _addresses(server, service: str) -> list[str]:
    ep = server.get_object("Endpoints", NS, service)
    return [a["ip"] for s in ep.get("subsets") or [] for a in s.get("addresses") or []]


def test_writes_of_kinds_no_controller_reads_cause_no_controller_writes():
    server = _loaded()
    events = _recording(server)
    before = server.resource_version
    server.apply_object({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": "deny", "namespace": NS}, "spec": {"podSelector": {}}})
    server.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": NS},
                         "data": {"k": "v"}})
    server.delete_object("NetworkPolicy", NS, "deny")
    assert events == [("ADDED", "networkpolicies", "deny"), ("ADDED", "configmaps", "c"),
                      ("DELETED", "networkpolicies", "deny")]
    assert server.resource_version == before + 3


def test_scaling_one_deployment_touches_only_its_chain_and_service():
    server = _loaded()
    events = _recording(server)
    server.apply_object(_deploy("b", replicas=2))
    touched = {(plural, name) for _, plural, name in events}
    assert ("deployments", "b") in touched and ("endpoints", "b") in touched
    assert not {(p, n) for p, n in touched if n.startswith(("a", "c"))}
    assert len(_addresses(server, "b")) == 2 and len(_addresses(server, "a")) == 1
    assert server.get_object("Deployment", NS, "b")["status"]["readyReplicas"] == 2


def test_relabelled_pod_leaves_the_service_that_selected_it():
    server = _loaded(("a",))
    pod = server.list_objects("Pod", NS)[0]
    pod["metadata"]["labels"] = {"app": "other"}
    server.apply_object(pod)
    assert _addresses(server, "a") == []
    # The ReplicaSet still owns it, so it keeps one pod; the service now has no endpoints.
    assert len(server.list_objects("Pod", NS)) == 1


def test_controllers_restore_endpoints_and_collect_garbage():
    server = _loaded(("a", "b"))
    slice_name = next(s["metadata"]["name"] for s in server.list_objects("EndpointSlice", NS)
                      if s["metadata"]["labels"]["kubernetes.io/service-name"] == "a")
    assert server.delete_object("EndpointSlice", NS, slice_name)
    assert server.get_object("EndpointSlice", NS, slice_name)["endpoints"]  # recreated by the controller
    assert server.delete_object("Service", NS, "a")
    assert server.get_object("Endpoints", NS, "a") is None
    assert [s["metadata"]["labels"]["kubernetes.io/service-name"] for s in server.list_objects("EndpointSlice", NS)] == ["b"]
    assert server.delete_object("Deployment", NS, "b")
    assert [p["metadata"]["labels"]["app"] for p in server.list_objects("Pod", NS)] == ["a"]
    assert [r["metadata"]["name"].split("-")[0] for r in server.list_objects("ReplicaSet", NS)] == ["a"]
    assert _addresses(server, "b") == []


def test_batch_holds_the_lock_and_runs_the_controllers_once_at_the_end():
    server = EmbeddedAPIServer()
    events = _recording(server)
    with server.batch():
        written = server.apply_objects(_app(["a", "b"]))
        assert server.list_objects("Pod", NS) == [] and "status" not in written[0]
        other = []
        thread = threading.Thread(target=lambda: other.append(server.store.lock.acquire(blocking=False)))
        thread.start()
        thread.join()
        assert other == [False]
        assert events == []  # listeners run after the batch, outside the lock
    pods = server.list_objects("Pod", NS)
    assert len(pods) == 2 and all(p["status"]["phase"] == "Running" for p in pods)
    assert len(_addresses(server, "a")) == 1 and ("ADDED", "pods", pods[0]["metadata"]["name"]) in events


def test_one_by_one_and_bulk_loads_reach_the_same_state():
    one = EmbeddedAPIServer()
    one.apply_objects(_app("abcd"), reconcile_once=False)
    bulk = _loaded("abcd")

    def shape(server):
        return sorted((p["metadata"]["labels"]["app"], p["status"]["phase"]) for p in server.list_objects("Pod", NS)), \
            [len(_addresses(server, n)) for n in "abcd"], \
            [d["status"]["readyReplicas"] for d in server.list_objects("Deployment", NS)]

    assert shape(one) == shape(bulk) == ([(n, "Running") for n in "abcd"], [1] * 4, [1] * 4)


def test_reconcile_catches_up_after_running_without_controllers():
    server = EmbeddedAPIServer(controllers=False)
    server.apply_objects(_app(["a"]))
    assert server.list_objects("Pod", NS) == []
    server.cluster.controllers_enabled = True
    server.reconcile(NS)
    assert len(_addresses(server, "a")) == 1


def test_iter_objects_gives_the_stored_objects_without_copies():
    server = _loaded(("a", "b"))
    with server.reading() as version:
        pods = list(server.iter_objects("Pod", NS))
        assert version == server.resource_version
    assert [p["metadata"]["labels"]["app"] for p in pods] == ["a", "b"]
    assert pods[0] is server.store.get("pods", NS, pods[0]["metadata"]["name"])
    assert len(list(server.iter_objects("Namespace"))) == 5
    server.apply_object(_deploy("a", replicas=0))
    assert pods[0]["status"]["phase"] == "Running"  # a view is never changed by later writes
    assert [p["metadata"]["labels"]["app"] for p in server.iter_objects("Pod", NS)] == ["b"]


REVISION = "deployment.kubernetes.io/revision"


def _image(name: str, image: str, **spec) -> dict:
    deploy = _deploy(name, replicas=2)
    deploy["spec"]["template"]["spec"]["containers"][0]["image"] = image
    deploy["spec"].update(spec)
    return deploy


def _sets(server, name: str) -> dict[str, tuple[str, int]]:
    """A Deployment's ReplicaSets: image -> (revision, replicas)."""
    return {rs["spec"]["template"]["spec"]["containers"][0]["image"]: (rs["metadata"]["annotations"][REVISION],
                                                                     rs["spec"]["replicas"])
            for rs in server.list_objects("ReplicaSet", NS) if rs["metadata"]["name"].startswith(name + "-")}


def test_rollouts_number_revisions_scale_old_sets_down_and_keep_the_history_limit():
    server = EmbeddedAPIServer()
    server.apply_object(_image("a", "v1"))
    server.apply_object(_image("a", "v2"))
    assert _sets(server, "a") == {"v1": ("1", 0), "v2": ("2", 2)}
    server.apply_object(_image("a", "v1"))  # a rollback: the first template's ReplicaSet again, at the next revision
    assert _sets(server, "a") == {"v1": ("3", 2), "v2": ("2", 0)}
    assert server.get_object("Deployment", NS, "a")["metadata"]["annotations"][REVISION] == "3"
    server.apply_object(_image("a", "v3", revisionHistoryLimit=1))
    assert _sets(server, "a") == {"v1": ("3", 0), "v3": ("4", 2)}  # the oldest old set (v2) is gone
    server.apply_object(_image("a", "v4", revisionHistoryLimit=1, paused=True))
    assert _sets(server, "a") == {"v1": ("3", 0), "v3": ("4", 2)}  # paused: no ReplicaSet for a new template
    server.apply_object(_image("a", "v5", revisionHistoryLimit=1, minReadySeconds=5))
    assert _sets(server, "a") == {"v3": ("4", 0), "v5": ("5", 2)}
    new = next(rs for rs in server.list_objects("ReplicaSet", NS) if rs["metadata"]["annotations"][REVISION] == "5")
    assert new["spec"]["minReadySeconds"] == 5
    assert new["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] == "3"
    assert sorted(p["spec"]["containers"][0]["image"] for p in server.list_objects("Pod", NS)) == ["v5", "v5"]
    status = server.get_object("Deployment", NS, "a")["status"]
    assert (status["replicas"], status["updatedReplicas"], status["readyReplicas"]) == (2, 2, 2)
    assert [c["type"] for c in status["conditions"]] == ["Available", "Progressing"]
    assert new["metadata"]["name"] in status["conditions"][1]["message"]


def test_endpoints_resolve_named_target_ports_per_pod_and_keep_app_protocols():
    server = EmbeddedAPIServer()
    for name, number in (("a", 8080), ("b", 9090)):
        deploy = _deploy(name)
        deploy["spec"]["template"]["metadata"]["labels"]["tier"] = "web"
        deploy["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": number}]
        server.apply_object(deploy)
    server.apply_object({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": NS},
                         "spec": {"selector": {"tier": "web"},
                                  "ports": [{"name": "http", "port": 80, "targetPort": "http", "appProtocol": "h2c"},
                                            {"name": "admin", "port": 81, "targetPort": "admin"}]}})
    subsets = server.get_object("Endpoints", NS, "web")["subsets"]
    assert sorted(s["ports"][0]["port"] for s in subsets) == [8080, 9090]  # one subset per resolved port set
    assert all(s["ports"] == [{"name": "http", "port": s["ports"][0]["port"], "protocol": "TCP", "appProtocol": "h2c"}]
               for s in subsets)  # "admin" names no container port: left out
    slices = [s for s in server.list_objects("EndpointSlice", NS)
              if s["metadata"]["labels"]["kubernetes.io/service-name"] == "web"]
    assert sorted(s["ports"][0]["port"] for s in slices) == [8080, 9090]


SCRIPT = """
import json, sys
sys.path.insert(0, {tests!r})
from test_controllers import _app, NS
from pytest_netarena.kube import EmbeddedAPIServer
server = EmbeddedAPIServer()
server.apply_objects(_app(["x%d" % i for i in range(8)]))
server.apply_object({{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "bare", "namespace": NS}},
                     "spec": {{"containers": [{{"name": "c", "image": "i"}}]}}}})
print(json.dumps(sorted((p["metadata"]["name"], p["status"]["podIP"]) for p in server.iter_objects("Pod", NS))))
"""


def test_pod_names_and_ips_do_not_depend_on_hash_seeds():
    code = SCRIPT.format(tests=os.path.dirname(__file__))
    outputs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                              env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")]
    assert outputs[0] == outputs[1] and len(json.loads(outputs[0])) == 9
