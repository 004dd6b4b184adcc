"""--kubeconfig reads objects over HTTP: against a tiny local server, and the embedded API server when it exists."""

from __future__ import annotations

import json
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from pytest_netarena.netpol.errors import ManifestError
from pytest_netarena.netpol.live import fetch_cluster
from pytest_netarena.testing.local_http import serving

from .netpol_xyz import netpol

LISTS = {
    "/api/v1/namespaces": [{"metadata": {"name": "x", "labels": {"ns": "x"}}}],
    "/api/v1/pods": [
        {"metadata": {"name": "a", "namespace": "x", "labels": {"pod": "a"}}, "status": {"podIP": "10.0.0.1"},
         "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "name": "http"}]}]}},
        {"metadata": {"name": "b", "namespace": "x", "labels": {"pod": "b"}}, "status": {"podIP": "10.0.0.2"}, "spec": {}},
    ],
    "/apis/networking.k8s.io/v1/networkpolicies": [
        {k: v for k, v in netpol("a-from-nobody", "x", {"matchLabels": {"pod": "a"}}).items() if k not in ("kind", "apiVersion")}],
}
TOKEN = "s3cret"


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server naming)
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self.send_response(401)
            self.end_headers()
            return
        if self.path not in LISTS:
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps({"kind": "List", "items": LISTS[self.path]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_server():
    with serving(_Handler) as url:
        yield url


def write_kubeconfig(path: Path, server: str, token: str | None = TOKEN) -> Path:
    user = {"token": token} if token else {}
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "contexts": [{"name": "test", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": user}]}))
    return path


def test_fetch_cluster_reads_the_three_lists(fake_server, tmp_path):
    cluster = fetch_cluster(write_kubeconfig(tmp_path / "kubeconfig", fake_server))
    assert [p.key for p in cluster.pods] == ["x/a", "x/b"]
    assert cluster.pods[0].ports[0].name == "http"
    assert [p.key for p in cluster.policies] == ["x/a-from-nobody"]
    assert cluster.services == ()  # the fake server has no services: they are optional


def test_cli_with_kubeconfig(fake_server, tmp_path):
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", fake_server)
    (tmp_path / "probes.yaml").write_text("- {from: x/b, to: x/a, port: http}\n- {from: x/a, to: x/b, port: 80}\n")
    result = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "netpol", "reach", "--kubeconfig", str(kubeconfig),
                             "--probes", str(tmp_path / "probes.yaml")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line)["allowed"] for line in result.stdout.splitlines()] == [False, True]


def test_unauthorized_and_unreachable_servers_are_clear_errors(fake_server, tmp_path):
    with pytest.raises(ManifestError, match="HTTP 401"):
        fetch_cluster(write_kubeconfig(tmp_path / "k1", fake_server, token="wrong"))
    with pytest.raises(ManifestError, match="GET http://127.0.0.1:1/api/v1/namespaces"):
        fetch_cluster(write_kubeconfig(tmp_path / "k2", "http://127.0.0.1:1"))
    with pytest.raises(ManifestError, match="no context named"):
        (tmp_path / "k3").write_text("current-context: nope\ncontexts: []\n")
        fetch_cluster(tmp_path / "k3")


def test_against_the_embedded_api_server(tmp_path):
    try:
        from pytest_netarena.kube import EmbeddedAPIServer
    except ImportError as error:
        pytest.skip(f"embedded API server not available yet ({error})")
    import urllib.request

    with EmbeddedAPIServer() as server:
        kubeconfig = getattr(server, "kubeconfig_path", None) or getattr(server, "kubeconfig", None)
        if callable(kubeconfig):
            kubeconfig = kubeconfig()
        if not kubeconfig or not Path(str(kubeconfig)).exists():
            pytest.skip("cannot find the embedded server's kubeconfig file")
        connection_config = json.loads(json.dumps(__import__("yaml").safe_load(Path(str(kubeconfig)).read_text())))
        url = connection_config["clusters"][0]["cluster"]["server"]

        def post(path, obj):
            request = urllib.request.Request(url + path, data=json.dumps(obj).encode(), method="POST",
                                             headers={"Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=10).read()

        post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "np-live"}})
        for name in ("a", "b"):
            post("/api/v1/namespaces/np-live/pods", {"apiVersion": "v1", "kind": "Pod",
                                                     "metadata": {"name": name, "labels": {"pod": name}},
                                                     "spec": {"containers": [{"name": "c", "image": "i"}]}})
        post("/apis/networking.k8s.io/v1/namespaces/np-live/networkpolicies",
             netpol("deny-a", "np-live", {"matchLabels": {"pod": "a"}}))
        (tmp_path / "probes.yaml").write_text("- {from: np-live/b, to: np-live/a, port: 80}\n- {from: np-live/a, to: np-live/b, port: 80}\n")
        result = subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "netpol", "reach", "--kubeconfig", str(kubeconfig),
                                 "--probes", str(tmp_path / "probes.yaml")], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert [json.loads(line)["allowed"] for line in result.stdout.splitlines()] == [False, True]
