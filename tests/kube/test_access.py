"""A namespace-scoped listener answers like RBAC (403 Status outside its namespace); bodies are capped; idle
connections are closed."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env


@pytest.fixture(scope="module")
def scoped(tmp_path_factory, kubectl_bin):
    server = EmbeddedAPIServer(scope="shop").start()
    server.apply_objects([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine", "namespace": "shop"}},
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "theirs", "namespace": "kube-system"},
         "stringData": {"password": "CANARY-secret"}},
    ])
    env = kubectl_env(server, tmp_path_factory.mktemp("scoped"))
    env["KUBECONFIG"] = server.write_kubeconfig(tmp_path_factory.mktemp("cfg") / "config", "shop")
    yield server, env
    server.stop()


def run(env, kubectl_bin, *args):
    return subprocess.run([kubectl_bin, *args], env=env, capture_output=True, text=True, timeout=30)


def test_the_own_namespace_is_fully_usable(scoped, kubectl_bin):
    server, env = scoped
    assert run(env, kubectl_bin, "get", "configmap", "mine", "-o", "name").stdout.strip() == "configmap/mine"
    created = run(env, kubectl_bin, "create", "configmap", "new", "--from-literal=a=b")
    assert created.returncode == 0, created.stderr
    assert run(env, kubectl_bin, "auth", "can-i", "delete", "pods").stdout.strip() == "yes"
    assert run(env, kubectl_bin, "auth", "can-i", "list", "secrets", "-n", "kube-system").stdout.startswith("no")


@pytest.mark.parametrize("args", [
    ("get", "secrets", "-n", "kube-system"),
    ("get", "secret", "theirs", "-n", "kube-system", "-o", "yaml"),
    ("get", "secrets", "-A"),
    ("get", "configmaps", "--all-namespaces"),
    ("delete", "configmap", "kube-root-ca.crt", "-n", "kube-system"),
    ("create", "namespace", "elsewhere"),
    ("label", "namespace", "shop", "x=y"),
    ("get", "--raw", "/api/v1/namespaces/kube-system/secrets"),
    ("get", "--raw", "/api/v1/secrets"),
    ("get", "--raw", "/api/v1/configmaps?watch=true"),
])
def test_everything_outside_the_namespace_is_forbidden(scoped, kubectl_bin, args):
    server, env = scoped
    result = run(env, kubectl_bin, *args)
    assert result.returncode != 0
    assert "Forbidden" in result.stderr or "forbidden" in result.stderr, result.stderr
    assert "CANARY-secret" not in result.stdout + result.stderr and "Q0FOQVJZ" not in result.stdout


def test_forbidden_is_a_kubernetes_status(scoped):
    server, _ = scoped
    status, body = raw(server, b"GET /api/v1/namespaces/kube-system/secrets HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 403
    assert body["kind"] == "Status" and body["reason"] == "Forbidden" and body["code"] == 403
    assert body["details"]["kind"] == "secrets"


def test_discovery_and_openapi_still_answer(scoped, kubectl_bin):
    server, env = scoped
    assert "networkpolicies" in run(env, kubectl_bin, "api-resources").stdout
    assert "NetworkPolicySpec" in run(env, kubectl_bin, "explain", "networkpolicy.spec").stdout or \
        "podSelector" in run(env, kubectl_bin, "explain", "networkpolicy.spec").stdout
    assert run(env, kubectl_bin, "get", "namespaces", "-o", "name").returncode == 0  # reading cluster scope


def raw(server, request: bytes, read_body: bool = True) -> tuple[int, dict]:
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                           if line.lower().startswith(b"content-length")), b"0"))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(head.split()[1]), json.loads(body) if body else {}


POST = b"POST /api/v1/namespaces/shop/configmaps HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


CHUNKED = b"Transfer-Encoding: chunked\r\n"
TWO_MIB = b"x" * (2 << 20)


@pytest.mark.parametrize("headers,body", [
    (b"Content-Length: %d\r\n" % (4 << 20), b""),  # the server answers from the header, before any body
    (b"Content-Length: -1\r\n", b""),  # "read until the peer closes" is never honoured
    (CHUNKED, b"%x\r\n" % (4 << 20)),  # one chunk over the cap: refused before its data is read
    (CHUNKED, b"%x\r\n%s\r\n%x\r\n" % (len(TWO_MIB), TWO_MIB, len(TWO_MIB))),  # chunks add up over the cap
], ids=["content-length", "content-length-minus-one", "one-chunk", "chunks-add-up"])
def test_request_bodies_over_the_cap_are_413_and_never_read_whole(scoped, headers, body):
    server, _ = scoped
    status, status_body = raw(server, POST + headers + b"\r\n" + body)
    assert status == 413 and status_body["reason"] == "RequestEntityTooLarge"


def test_idle_connections_are_closed(scoped, monkeypatch):
    server, _ = scoped
    monkeypatch.setattr(server, "idle_timeout_s", 0.5)
    with socket.create_connection((server.host, server.port), timeout=30) as sock:
        sock.sendall(b"GET /api/v1/namespaces/shop/configmaps HTTP/1.1\r\nHost: x\r\n")  # never finishes
        assert sock.recv(1024) == b""  # the server hangs up (the client waits up to 30 s)
