"""The real-cluster backend up to the probes (against the embedded server via kubectl), and the probe commands."""

from __future__ import annotations

import subprocess

import pytest

from pytest_netarena.apps.k8s import APP
from pytest_netarena.apps.k8s.app import make_backend
from pytest_netarena.apps.k8s.environment import K8sEnvironment
from pytest_netarena.apps.k8s.workloads.model import online_boutique
from pytest_netarena.apps.k8s.backends.probes import parse_probe_output, probe_argv, probe_script, stand_in_manifests
from pytest_netarena.apps.k8s.backends.real import EPISODE_LABEL, RealClusterBackend
from pytest_netarena.core.app import RunOptions
from pytest_netarena.core.types import Outcome
from pytest_netarena.core.errors import BackendUnavailable

from .helpers import episode


@pytest.fixture(scope="module")
def server():
    from pytest_netarena.kube.server import EmbeddedAPIServer

    with EmbeddedAPIServer() as api:
        yield api


def test_episodes_run_in_their_own_namespace_which_is_deleted_afterwards(server):
    app = online_boutique()
    backend = RealClusterBackend(app, kubeconfig=server.kubeconfig_path, scoped=False, prober="engine")
    backend.prepare()
    env = K8sEnvironment(app, "online-boutique", backend)
    queries = APP.generate(RunOptions(seed=4, queries=1, levels=(2,)))[:2]
    assert len(queries) == 2
    namespaces = []
    try:
        for query in queries:
            result = episode(env, APP.builtin_agent("oracle", query, env), query)
            namespaces.append(backend.namespace)
            assert result.outcome is Outcome.RESOLVED, result.details
            assert backend.namespace.startswith("netarena-")
            ns = server.get_object("Namespace", None, backend.namespace)
            assert ns["metadata"]["labels"][EPISODE_LABEL] == "true"
            assert len(server.list_objects("Pod", backend.namespace)) == 12
        # the action runs in a box that joins the harness's network and sees only the episode's kubeconfig
        seen = env.step("kubectl config view --minify -o jsonpath='{..namespace}'; echo; cat /etc/kubeconfig | wc -c")
        assert not seen.refused and seen.output.split()[0] == backend.namespace
        assert int(seen.output.split()[1]) == len(backend.agent_kubeconfig())
    finally:
        env.close()
    names = {ns["metadata"]["name"] for ns in server.list_objects("Namespace")}
    assert not names & set(namespaces)


def test_setup_failure_still_deletes_the_namespace(server, monkeypatch):
    backend = RealClusterBackend(online_boutique(), kubeconfig=server.kubeconfig_path, scoped=False,
                                 prober="engine")
    backend.prepare()
    env = K8sEnvironment(online_boutique(), "online-boutique", backend)

    query = APP.generate(RunOptions(seed=4, queries=1, levels=(1,)))[0]
    original = backend._agent_environment
    monkeypatch.setattr(backend, "_agent_environment", lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    result = episode(env, APP.builtin_agent("oracle", query, env), query)
    assert result.outcome is Outcome.INFRA_ERROR and "boom" in result.details
    assert not [ns for ns in server.list_objects("Namespace") if ns["metadata"]["name"].startswith("netarena-")]
    monkeypatch.setattr(backend, "_agent_environment", original)
    env.close()


def test_unreachable_cluster_is_backend_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    with pytest.raises(BackendUnavailable):
        make_backend(online_boutique(), "kubeconfig").prepare()
    config = tmp_path / "config"
    config.write_text('{"apiVersion": "v1", "kind": "Config", "clusters": [{"name": "c", "cluster": '
                      '{"server": "http://127.0.0.1:9"}}], "users": [{"name": "u", "user": {}}], "contexts": '
                      '[{"name": "x", "context": {"cluster": "c", "user": "u"}}], "current-context": "x"}')
    monkeypatch.setenv("KUBECONFIG", str(config))
    with pytest.raises(BackendUnavailable, match="does not answer"):
        make_backend(online_boutique(), "kubeconfig:x").prepare()


def test_stand_ins_serve_every_container_port():
    manifests = stand_in_manifests(online_boutique())
    deployments = {m["metadata"]["name"]: m for m in manifests if m["kind"] == "Deployment"}
    email = deployments["emailservice"]["spec"]["template"]["spec"]["containers"][0]
    assert email["args"] == ["porter"] and {"name": "SERVE_PORT_8080", "value": "netarena"} in email["env"]
    assert email["ports"] == [{"containerPort": 8080, "protocol": "TCP"}] and email["name"] == "server"
    loadgen = deployments["loadgenerator"]["spec"]["template"]["spec"]["containers"][0]
    assert loadgen["args"] == ["pause"] and loadgen["name"] == "main"
    assert deployments["redis-cart"]["spec"]["template"]["spec"]["containers"][0]["name"] == "redis"
    assert sum(m["kind"] == "Service" for m in manifests) == 11


def test_probe_script_runs_every_target_in_parallel_and_reports_each(tmp_path):
    targets = [("10.0.0.5", 9555, "TCP"), ("10.0.0.6", 50051, "SCTP"), ("fd00::1", 80, "TCP")]
    argv = probe_argv("frontend-abc", "server", targets)
    assert argv[:6] == ["exec", "frontend-abc", "-c", "server", "--", "sh"]
    script = probe_script(targets)
    assert "/agnhost connect 10.0.0.5:9555 --timeout=1s --protocol=tcp" in script
    assert "--protocol=sctp" in script and "'[fd00::1]:80'" in script and script.endswith("wait")
    # Run the script for real with a fake agnhost: port 9555 connects, the rest fail.
    fake = tmp_path / "agnhost"
    fake.write_text('#!/bin/sh\n[ "$2" = "10.0.0.5:9555" ]\n')
    fake.chmod(0o755)
    output = subprocess.run(["sh", "-c", script.replace("/agnhost", str(fake))], capture_output=True,
                            text=True, timeout=10).stdout
    verdicts = parse_probe_output(output, targets)
    assert verdicts == {targets[0]: True, targets[1]: False, targets[2]: False}


def test_missing_probe_lines_count_as_unreachable():
    targets = [("10.0.0.5", 9555, "TCP")]
    assert parse_probe_output("error: unable to upgrade connection", targets) == {targets[0]: False}
