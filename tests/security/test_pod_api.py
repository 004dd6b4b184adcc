"""Red team: pods reach the API server now (kubernetes.default.svc), so a pod's code tries to do more with it than its
ServiceAccount may: read what RBAC does not grant, grant itself more, impersonate, use another pod's token after that
pod is gone, reach the node beyond the API's port, and get past an egress policy that isolates it."""

from __future__ import annotations

import subprocess

import pytest

from pytest_netarena.cluster import live_support
from pytest_netarena.kube import EmbeddedAPIServer, kubectl_env, kubectl_path
from pytest_netarena.kube.node import NODE_IP

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")
TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount"


def _pod(name: str, namespace: str = "tenant", image: str = "alpine/k8s:1.30.6", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": image, "command": ["sh", "-c", "sleep 3600"]}], **spec}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from pytest_netarena.cluster import LiveCluster

    server = EmbeddedAPIServer().start()
    running = LiveCluster(server, backoff_s=0.5).start()
    server.apply_objects([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tenant"}},
                          {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "vault", "namespace": "default"},
                           "stringData": {"key": "canary-d0e1f2"}}])
    env = kubectl_env(server, tmp_path_factory.mktemp("kubectl"))

    def sh(pod: str, command: str, namespace: str = "tenant") -> subprocess.CompletedProcess:
        return subprocess.run([kubectl_path(), "-n", namespace, "exec", pod, "--", "sh", "-c", command], env=env,
                              capture_output=True, text=True, timeout=120)

    yield server, running, sh
    running.stop()
    server.stop()


def test_a_pods_token_gets_what_rbac_grants_and_nothing_more(cluster):
    server, running, sh = cluster
    server.apply_objects([_pod("intruder")])
    running.wait_ready(60, "tenant")
    assert sh("intruder", "kubectl auth whoami -o jsonpath='{.status.userInfo.username}'").stdout == \
        "system:serviceaccount:tenant:default"
    attempts = ["kubectl get secrets", "kubectl -n default get secret vault -o yaml", "kubectl get secrets -A",
                "kubectl -n kube-system get pods", "kubectl create clusterrolebinding mine --clusterrole=cluster-admin "
                "--serviceaccount=tenant:default", "kubectl create rolebinding mine --clusterrole=admin "
                "--serviceaccount=tenant:default", "kubectl create token default", "kubectl delete namespace default"]
    for attempt in attempts:
        done = sh("intruder", attempt)
        assert done.returncode != 0 and "forbidden" in done.stderr.lower(), (attempt, done.stdout, done.stderr)
        assert "canary-d0e1f2" not in done.stdout + done.stderr
    for headers in ("Impersonate-User: system:admin", "Impersonate-User: kubernetes-admin\" -H \"Impersonate-Group: "
                                                     "system:masters"):
        done = sh("intruder", f'curl -s --cacert {TOKEN}/ca.crt -H "Authorization: Bearer $(cat {TOKEN}/token)" '
                              f'-H "{headers}" https://kubernetes.default.svc/api/v1/namespaces/default/secrets')
        assert '"code":403' in done.stdout and "canary-d0e1f2" not in done.stdout, (headers, done.stdout)
    assert server.get_object("ClusterRoleBinding", "", "mine") is None


def test_a_token_dies_with_its_pod(cluster):
    server, running, sh = cluster
    server.apply_objects([_pod("leaker"), _pod("user")])
    running.wait_ready(60, "tenant")
    stolen = sh("leaker", f"cat {TOKEN}/token").stdout
    assert stolen.count(".") == 2
    call = (f'curl -s -o /dev/null -w "%{{http_code}}" --cacert {TOKEN}/ca.crt -H "Authorization: Bearer {stolen}" '
            "https://kubernetes.default.svc/api/v1/namespaces/tenant/pods")
    assert sh("user", call).stdout == "403"  # reached and judged by RBAC (the default account reads no pods)
    server.delete_object("Pod", "tenant", "leaker")
    running.settle()
    assert sh("user", call).stdout == "401"


def test_a_pod_reaches_only_the_api_port_of_the_node(cluster):
    server, running, sh = cluster
    server.apply_objects([_pod("scanner", image="busybox")])
    running.wait_ready(60, "tenant")
    ports = [22, 80, 443, 2379, 6444, 10250, server.port]
    probes = "; ".join(f"nc -w 1 {NODE_IP} {port} </dev/null && echo open-{port}" for port in ports)
    output = sh("scanner", probes).stdout
    assert "open-" not in output, output
    assert "open-6443" in sh("scanner", f"nc -w 2 {NODE_IP} 6443 </dev/null && echo open-6443").stdout


def test_an_egress_policy_isolating_a_pod_cuts_its_way_to_the_api(cluster):
    server, running, sh = cluster
    server.apply_objects([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "locked"}}])
    server.apply_objects([_pod("caged", namespace="locked")])
    running.wait_ready(60, "locked")
    whoami = (f'curl -sf --max-time 3 --cacert {TOKEN}/ca.crt -H "Authorization: Bearer $(cat {TOKEN}/token)" '
              "https://kubernetes.default.svc/version")
    assert sh("caged", whoami, "locked").returncode == 0
    dns = {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
    server.apply_objects([{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                           "metadata": {"name": "dns-only", "namespace": "locked"},
                           "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [dns]}}])
    running.settle()
    assert sh("caged", "nslookup kubernetes.default.svc.cluster.local", "locked").returncode == 0
    assert sh("caged", whoami, "locked").returncode != 0
    server.apply_objects([{"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                           "metadata": {"name": "allow-api", "namespace": "locked"},
                           "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [
                               {"to": [{"ipBlock": {"cidr": f"{NODE_IP}/32"}}], "ports": [{"port": 6443}]}]}}])
    running.settle()
    assert sh("caged", whoami, "locked").returncode == 0
