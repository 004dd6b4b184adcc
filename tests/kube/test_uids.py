"""Uids and generated names depend on what names an object, never on when other writes land (reproducible seeds)."""

from __future__ import annotations

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.registry import BY_PLURAL

NS = "shop"


def _deploy(name: str, replicas: int = 2) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": name, "image": f"example/{name}:1"}]}}}}


def _namespace() -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}


def _noise(server: EmbeddedAPIServer, count: int) -> None:
    """Writes that advance the resourceVersion as running pods' status reports do, in an order of their own."""
    for index in range(count):
        server.apply_object({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "status", "namespace": NS},
                             "data": {"n": str(index)}})


def _seen(server: EmbeddedAPIServer) -> list[tuple[str, str, str]]:
    return sorted((kind, o["metadata"]["name"], o["metadata"]["uid"])
                  for kind in ("Deployment", "ReplicaSet", "Pod", "Service", "EndpointSlice")
                  for o in server.list_objects(kind, NS))


def test_names_and_uids_ignore_how_many_writes_came_between():
    quiet, busy = EmbeddedAPIServer(), EmbeddedAPIServer()
    for server, noise in ((quiet, 0), (busy, 7)):
        server.apply_object(_namespace())
        _noise(server, noise)
        server.apply_object(_deploy("cart"))
        _noise(server, noise * 3)
        server.apply_object(_deploy("front", 3))
        _noise(server, noise)
        server.apply_object({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "cart", "namespace": NS},
                             "spec": {"selector": {"app": "cart"}, "ports": [{"port": 80}]}})
    assert quiet.store.resource_version != busy.store.resource_version
    assert _seen(quiet) == _seen(busy)
    assert len([name for kind, name, _ in _seen(quiet) if kind == "Pod"]) == 5


def test_generated_names_ignore_writes_between():
    names = []
    for noise in (0, 5):
        server = EmbeddedAPIServer()
        server.apply_object(_namespace())
        _noise(server, noise)
        made = server.cluster.create(BY_PLURAL["configmaps"], NS,
                                     {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"generateName": "job-", "namespace": NS}})
        names.append((made["metadata"]["name"], made["metadata"]["uid"]))
    assert names[0] == names[1] and names[0][0].startswith("job-") and len(names[0][0]) == 9


def test_a_name_made_again_gets_a_new_uid_even_after_a_reset():
    server = EmbeddedAPIServer()
    server.apply_object(_namespace())
    server.snapshot()
    uids = set()
    for _ in range(3):
        server.apply_object(_deploy("cart", 1))
        uids.add(server.get_object("Deployment", NS, "cart")["metadata"]["uid"])
        server.reset()  # the store forgets the Deployment; its uid stays spent
    server.apply_object(_deploy("cart", 1))
    uids.add(server.get_object("Deployment", NS, "cart")["metadata"]["uid"])
    server.delete_object("Deployment", NS, "cart")
    server.apply_object(_deploy("cart", 1))
    uids.add(server.get_object("Deployment", NS, "cart")["metadata"]["uid"])
    assert len(uids) == 5


def test_an_episode_names_its_pods_as_a_fresh_server_would():
    """After a reset, a ReplicaSet remakes a deleted pod under the name it had in the first episode."""
    server = EmbeddedAPIServer()
    server.apply_objects([_namespace(), _deploy("cart", 1)])
    server.snapshot()
    (first,) = server.list_objects("Pod", NS)
    server.delete_object("Pod", NS, first["metadata"]["name"])
    server.reconcile(NS)
    (second,) = server.list_objects("Pod", NS)
    assert second["metadata"]["name"] != first["metadata"]["name"]
    server.reset()
    server.delete_object("Pod", NS, first["metadata"]["name"])
    server.reconcile(NS)
    (again,) = server.list_objects("Pod", NS)
    assert again["metadata"]["name"] == second["metadata"]["name"]
    assert again["metadata"]["uid"] != second["metadata"]["uid"]
