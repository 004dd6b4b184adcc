"""Shared fixtures of the live cluster's tests: one API server with running pods per module, the real kubectl at it,
and a fresh namespace per test (pods of one test never meet another's)."""

from __future__ import annotations

import itertools
import json
import subprocess
import time

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import EmbeddedAPIServer, KubectlNotFound, kubectl_env, kubectl_path

needs_live = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")
_numbers = itertools.count()


class Live:
    """The server, its LiveCluster and the real kubectl, as one test module shares them."""

    def __init__(self, server, cluster, env, kubectl) -> None:
        self.server, self.cluster, self.env, self.kubectl_bin = server, cluster, env, kubectl

    def kubectl(self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60):
        result = subprocess.run([self.kubectl_bin, *args], input=input, env=self.env, capture_output=True, text=True,
                                timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({result.returncode}): {result.stderr}")
        return result

    def namespace(self, labels: dict | None = None) -> str:
        name = f"t{next(_numbers)}-{int(time.time() * 1000) % 100000}"
        self.server.apply_object({"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": name, "labels": labels or {}}})
        return name

    def apply(self, namespace: str, *objects: dict) -> None:
        for obj in objects:
            obj.setdefault("metadata", {})["namespace"] = namespace
        self.server.apply_objects(list(objects))

    def ready(self, namespace: str, timeout: float = 60) -> None:
        self.cluster.wait_ready(timeout, namespace)

    def pod(self, namespace: str, prefix: str = "") -> dict:
        """The one pod of the namespace whose name starts with prefix."""
        found = [p for p in self.server.list_objects("Pod", namespace) if p["metadata"]["name"].startswith(prefix)]
        assert len(found) == 1, [p["metadata"]["name"] for p in found]
        return found[0]

    def wait_for(self, predicate, timeout: float = 30, what: str = "the condition"):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def json(self, *args: str):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)


def busybox_pod(name: str, command: str, labels: dict | None = None, ports: list | None = None, **spec) -> dict:
    container = {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", command]}
    if ports:
        container["ports"] = ports
    for key in ("readinessProbe", "livenessProbe", "startupProbe"):
        if key in spec:
            container[key] = spec.pop(key)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {"app": name}},
            "spec": {"containers": [container], **spec}}


def deployment(name: str, containers: list[dict], labels: dict | None = None, replicas: int = 1) -> dict:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}}


def service(name: str, selector: dict, ports: list[dict]) -> dict:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": selector, "ports": ports}}


def web_command(port: int = 8080, text: str = "hello") -> str:
    return f"mkdir -p /www && echo {text} > /www/index.html && exec httpd -f -p {port} -h /www"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    if not live_support().ok:
        pytest.skip(f"pods cannot run here: {live_support().reason}")
    try:
        binary = kubectl_path()
    except KubectlNotFound as error:
        pytest.skip(str(error))
    from pytest_netarena.cluster import LiveCluster

    server = EmbeddedAPIServer().start()
    cluster = LiveCluster(server, backoff_s=0.5).start()
    try:
        cluster.wait_ready(60)
        yield Live(server, cluster, kubectl_env(server, tmp_path_factory.mktemp("kubectl")), binary)
    finally:
        errors = cluster.kubelet.errors + cluster.dataplane.errors
        cluster.stop()
        server.stop()
    assert not errors, errors
