"""Red team: a pod's probe `host` is agent text (an agent can edit a Deployment); the harness must never hand it to the
host's resolver (a channel out of the sealed cluster: a name like `<data>.example` would carry data to the host's
DNS server).

The harness runs in this test's process, so every getaddrinfo it makes passes through a spy the test wraps around
the real one (it still resolves as before, it only records the names). The probes' hosts are names only this test
knows; none may reach the spy, each failed probe is the kubelet's event, and names the cluster's own DNS knows and
literal addresses still work."""

from __future__ import annotations

import secrets
import socket
import time

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import EmbeddedAPIServer

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")


def _server_pod(name: str, probe: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": "busybox:1.36",
                                     "command": ["sh", "-c", "mkdir -p /w && echo ok > /w/index.html && "
                                                             "exec httpd -f -p 8080 -h /w"],
                                     "ports": [{"name": "http", "containerPort": 8080}],
                                     "readinessProbe": {**probe, "periodSeconds": 1, "timeoutSeconds": 1}}]}}


@pytest.fixture
def asked(monkeypatch):
    """The names the harness's process asks getaddrinfo for (the real one still answers)."""
    names: list[str] = []
    real = socket.getaddrinfo

    def spy(host, *args, **kwargs):
        names.append(host.decode() if isinstance(host, bytes) else str(host))
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", spy)
    return names


def _events(server, name: str) -> list[str]:
    return [e["message"] for e in server.list_objects("Event", "default")
            if e["involvedObject"]["name"] == name and e["reason"] == "Unhealthy"]


def _ready(server, name: str) -> bool:
    pod = server.get_object("Pod", "default", name) or {}
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get(
        "conditions") or [])


def test_probe_hosts_never_reach_the_hosts_resolver(asked):
    from pytest_netarena.cluster import LiveCluster

    token = secrets.token_hex(6)
    server = EmbeddedAPIServer().start()
    live = LiveCluster(server, backoff_s=0.5).start()
    try:
        live.wait_ready(60)
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lit", "namespace": "default"},
                   "spec": {"selector": {"app": "lit"}, "ports": [{"port": 80, "targetPort": 8080}]}}
        server.apply_objects([
            _server_pod("tcp", {"tcpSocket": {"port": "http", "host": f"tcp-{token}.example"}}),
            _server_pod("web", {"httpGet": {"port": 8080, "path": "/", "host": f"web-{token}.example"}}),
            _server_pod("odd", {"tcpSocket": {"port": 8080, "host": f"odd {token}\nx"}}),
            _server_pod("lit", {"tcpSocket": {"port": 8080, "host": "127.0.0.1"}}), service])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not all(_events(server, n) for n in ("tcp", "web", "odd")):
            time.sleep(0.2)
        assert not [name for name in asked if token in name], asked  # the attack reached the host's DNS
        assert any(m == f"Readiness probe failed: dial tcp: lookup tcp-{token}.example on 10.96.0.10:53: server "
                        "misbehaving" for m in _events(server, "tcp")), _events(server, "tcp")
        assert any(m.startswith(f'Readiness probe failed: Get "http://web-{token}.example:8080/": dial tcp: lookup '
                                f"web-{token}.example on 10.96.0.10:53") for m in _events(server, "web"))
        assert any(m == f"Readiness probe failed: dial tcp: lookup odd {token}\nx: no such host"
                   for m in _events(server, "odd")), _events(server, "odd")
        assert not any(_ready(server, n) for n in ("tcp", "web", "odd"))
        # a literal address is dialled from the node (its own loopback: nothing listens there) and fails as a dial
        assert any("dial tcp 127.0.0.1:8080: connect: connection refused" in m for m in _events(server, "lit"))
        # a name the cluster's DNS knows, asked from the node: the Service's address, reached through its rules
        address = server.get_object("Service", "default", "lit")["spec"]["clusterIP"]
        server.apply_objects([_server_pod("named", {"tcpSocket": {"port": 80,
                                                                  "host": "lit.default.svc.cluster.local"}}),
                              _server_pod("literal", {"tcpSocket": {"port": 80, "host": address}})])
        server.delete_object("Pod", "default", "lit")
        server.apply_objects([_server_pod("lit", {"tcpSocket": {"port": 8080}})])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (_ready(server, "named") and _ready(server, "literal")):
            time.sleep(0.2)
        assert _ready(server, "named") and _ready(server, "literal"), (_events(server, "named"),
                                                                      _events(server, "literal"))
        assert not [name for name in asked if "cluster.local" in name or token in name], asked
    finally:
        live.stop()
        server.stop()
