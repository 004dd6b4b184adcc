"""Shared fixtures for the embedded Kubernetes API server tests: one server per module, reset per test, and plain
HTTP calls to it."""

from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request

import pytest

pytest.importorskip("kubernetes_validate")

from pytest_netarena.kube import (
    EmbeddedAPIServer,
    KubectlNotFound,
    kubectl_env,
    kubectl_path,
)

AGE = re.compile(r"(?<=\s)(\d+[smhdy])+(\d+[smhdy])?(?=\s|$)")


@pytest.fixture(scope="module")
def server():
    srv = EmbeddedAPIServer().start()
    srv.snapshot()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def kubectl_bin():
    try:
        return kubectl_path()
    except KubectlNotFound as error:
        pytest.skip(str(error))


@pytest.fixture(scope="module")
def kube_env(server, tmp_path_factory):
    return kubectl_env(server, tmp_path_factory.mktemp("kubectl"))


@pytest.fixture
def cluster(server):
    server.reset()
    yield server


@pytest.fixture
def kubectl(cluster, kubectl_bin, kube_env):
    def run(*args, input=None, editor=None, check=True, timeout=30):
        env = dict(kube_env)
        if editor is not None:
            env["KUBE_EDITOR"] = editor
        result = subprocess.run([kubectl_bin, *args], input=input, env=env, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stdout}{result.stderr}\nserver error: {cluster.last_error}")
        return result

    return run


def kubectl_for(server, kubectl_bin: str, tmp) -> object:
    """A kubectl runner like the `kubectl` fixture's, for a server of the test's own (nodes, a profile)."""
    env = kubectl_env(server, tmp)

    def run(*args, input=None, check=True, timeout=30):
        result = subprocess.run([kubectl_bin, *args], input=input, env=env, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stdout}{result.stderr}\nserver error: {server.last_error}")
        return result

    return run


def call(server, method: str, path: str, body, content_type: str = "application/json") -> tuple[int, dict]:
    """One HTTP request to the server, its body bytes as given or anything else as JSON: the status and JSON reply."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(server.url + path, method=method, data=data, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def mask(text: str) -> str:
    """Mask ages and collapse column padding so golden text does not depend on timing."""
    lines = []
    for line in text.strip().splitlines():
        line = AGE.sub("<age>", line)
        lines.append(re.sub(r"\s{2,}", "  ", line.rstrip()))
    return "\n".join(lines)


WEB = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, tier: frontend}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 8080, name: http}]
---
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: http}]
"""
