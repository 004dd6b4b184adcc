"""The emulator tells the truth about ports: a Service reaches only ports a container listens on."""

from __future__ import annotations

import pytest

from pytest_netarena.apps.k8s.backends.embedded import EmbeddedBackend
from pytest_netarena.apps.k8s.matrix import OfflineMatrix
from pytest_netarena.apps.k8s.workloads.model import Flow, app_from_manifests


def deployment(name, ports):
    container = {"name": "main", "image": "registry.k8s.io/e2e-test-images/agnhost:2.53"}
    if ports:
        container["ports"] = ports
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [container]}}}}


def service(name, target):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": [{"name": "web", "port": 80, "targetPort": target,
                                                            "protocol": "TCP"}]}}


def allow_ports(*ports):
    """A policy on api admitting the client on these ports (the policy never decides the cases below)."""
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "api"},
            "spec": {"podSelector": {"matchLabels": {"app": "api"}}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "client"}}}],
                                  "ports": [{"port": p} for p in ports]}]}}


HTTP = [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
CASES = {  # targetPort -> reachable
    "numeric-match": (8080, True),
    "numeric-mismatch": (9090, False),
    "named-match": ("http", True),
    "named-mismatch": ("grpc", False),
}
FLOW = Flow("client", "api", 80)


def app_with(target, policies=()):
    manifests = [deployment("api", HTTP), service("api", target), deployment("client", [])]
    return app_from_manifests(f"ports-{target}", manifests, list(policies))


@pytest.mark.parametrize("case", CASES)
def test_offline_matrix_reaches_only_listening_ports(case):
    target, reachable = CASES[case]
    app = app_with(target)
    assert OfflineMatrix(app).matrix({})[FLOW] is reachable
    # A policy that admits the port explicitly changes nothing: no process listens there.
    assert OfflineMatrix(app).matrix({"api": allow_ports(8080, 9090)})[FLOW] is reachable


@pytest.fixture(scope="module")
def backends():
    made = {}
    yield made
    for backend in made.values():
        backend.close()


@pytest.mark.parametrize("case", CASES)
def test_embedded_cluster_reaches_only_listening_ports(case, backends):
    """Pods made by the server's own controllers from the Deployment; the Service as the API stored it."""
    target, reachable = CASES[case]
    app = app_with(target, [allow_ports(8080, 9090)])
    backend = backends[case] = EmbeddedBackend(app)
    backend.prepare()
    backend.begin(app.healthy_view())
    assert backend.observe().matrix[FLOW] is reachable
    if not reachable:
        assert "does not listen on" in backend.explain(FLOW) or "no container port named" in backend.explain(FLOW)


def test_a_second_container_listening_on_the_target_port_makes_it_reachable():
    app = app_with(9090)
    api = app.manifests[0]
    api["spec"]["template"]["spec"]["containers"].append(
        {"name": "sidecar", "image": "x", "ports": [{"containerPort": 9090, "protocol": "TCP"}]})
    app = app_from_manifests("sidecar", list(app.manifests), [])
    assert OfflineMatrix(app).matrix({})[FLOW] is True


def test_the_listening_port_is_per_protocol():
    app = app_from_manifests("udp", [deployment("api", [{"containerPort": 8080, "protocol": "UDP"}]),
                                     service("api", 8080), deployment("client", [])], [])
    assert OfflineMatrix(app).matrix({})[FLOW] is False
