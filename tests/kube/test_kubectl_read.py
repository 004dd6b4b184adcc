"""Golden tests: kubectl get / describe / explain against the embedded API server."""

from __future__ import annotations

import json

from .conftest import WEB, mask


def test_get_namespaces_and_nodes(kubectl):
    assert mask(kubectl("get", "ns").stdout) == mask("""
NAME              STATUS   AGE
default           Active   1s
kube-node-lease   Active   1s
kube-public       Active   1s
kube-system       Active   1s""")
    nodes = kubectl("get", "nodes").stdout
    assert mask(nodes).splitlines()[1].startswith("netarena-node  Ready  control-plane  <age>  v1.")


def test_apply_then_get_looks_like_a_healthy_cluster(kubectl, cluster):
    assert kubectl("apply", "-f", "-", input=WEB).stdout == "deployment.apps/web created\nservice/web created\n"
    pods = mask(kubectl("get", "pods").stdout).splitlines()
    assert pods[0] == "NAME  READY  STATUS  RESTARTS  AGE"
    assert len(pods) == 3
    assert all(line.split("  ")[1:4] == ["1/1", "Running", "0"] for line in pods[1:])
    deploy = mask(kubectl("get", "deploy").stdout)
    assert deploy == "NAME  READY  UP-TO-DATE  AVAILABLE  AGE\nweb  2/2  2  2  <age>"
    wide = mask(kubectl("get", "pods", "-o", "wide").stdout).splitlines()
    assert wide[0] == "NAME  READY  STATUS  RESTARTS  AGE  IP  NODE  NOMINATED NODE  READINESS GATES"
    assert {line.split("  ")[5] for line in wide[1:]} == {"10.244.0.2", "10.244.0.3"}
    svc = mask(kubectl("get", "svc", "web", "-o", "wide").stdout).splitlines()[1].split("  ")
    assert svc[0:2] == ["web", "ClusterIP"] and svc[2].startswith("10.96.") and svc[3:5] == ["<none>", "80/TCP"]
    assert svc[-1] == "app=web"
    ep = mask(kubectl("get", "endpoints", "web").stdout).splitlines()[1]
    assert ep.startswith("web  10.244.0.2:8080,10.244.0.3:8080")


def test_get_all_namespaces_labels_and_output_formats(kubectl):
    kubectl("apply", "-f", "-", input=WEB)
    kubectl("create", "namespace", "other")
    kubectl("create", "configmap", "settings", "-n", "other", "--from-literal=mode=dev")
    all_cms = mask(kubectl("get", "cm", "-A").stdout)
    assert "other  settings  1  <age>" in all_cms
    by_label = mask(kubectl("get", "pods", "-l", "tier=frontend", "-o", "name").stdout).splitlines()
    assert len(by_label) == 2 and all(n.startswith("pod/web-") for n in by_label)
    assert kubectl("get", "pods", "-l", "tier in (backend)").stderr.strip() == "No resources found in default namespace."
    doc = json.loads(kubectl("get", "deploy", "web", "-o", "json").stdout)
    assert doc["status"]["readyReplicas"] == 2 and doc["metadata"]["generation"] == 1
    assert "kind: Deployment" in kubectl("get", "deploy", "web", "-o", "yaml").stdout
    ips = kubectl("get", "pods", "-o", "jsonpath={.items[*].status.podIP}").stdout.split()
    assert sorted(ips) == ["10.244.0.2", "10.244.0.3"]
    shown = kubectl("get", "pods", "--show-labels").stdout
    assert "app=web,pod-template-hash=" in shown
    sorted_out = kubectl("get", "pods", "--sort-by=.metadata.name", "-o", "name").stdout
    assert sorted_out.splitlines() == sorted(sorted_out.splitlines())
    field = kubectl("get", "pods", "--field-selector", "status.phase=Running", "-o", "name").stdout
    assert len(field.splitlines()) == 2


def test_get_all_and_describe(kubectl):
    kubectl("apply", "-f", "-", input=WEB)
    everything = kubectl("get", "all").stdout
    for name in ("service/web", "deployment.apps/web", "replicaset.apps/web-", "pod/web-"):
        assert name in everything
    described = kubectl("describe", "deploy", "web").stdout
    assert "Replicas:               2 desired | 2 updated | 2 total | 2 available | 0 unavailable" in described
    assert "NewReplicaSet:   web-" in described
    svc = kubectl("describe", "svc", "web").stdout
    assert "TargetPort:               http/TCP" in svc
    assert "Endpoints:                10.244.0.2:8080,10.244.0.3:8080" in svc
    pod_name = kubectl("get", "pods", "-o", "jsonpath={.items[0].metadata.name}").stdout
    pod = kubectl("describe", "pod", pod_name).stdout
    assert "Status:           Running" in pod and "Node:             netarena-node/172.18.0.2" in pod
    assert "Controlled By:  ReplicaSet/web-" in pod
    ns = kubectl("describe", "ns", "default").stdout
    assert "Status:       Active" in ns


def test_explain_uses_openapi_v3(kubectl):
    out = kubectl("explain", "networkpolicy.spec.ingress.ports").stdout
    assert "KIND:       NetworkPolicy" in out and "endPort\t<integer>" in out
    recursive = kubectl("explain", "deployment.spec.strategy", "--recursive").stdout
    assert "rollingUpdate\t<RollingUpdateDeployment>" in recursive


def test_api_resources_and_raw(kubectl):
    resources = kubectl("api-resources").stdout
    assert "networkpolicies                     netpol       networking.k8s.io/v1" in " ".join(
        resources.split("  ")) or "netpol" in resources
    assert kubectl("get", "--raw", "/healthz").stdout == "ok"
    assert "yes" in kubectl("auth", "can-i", "create", "pods").stdout
    assert "Kubernetes control plane is running at" in kubectl("cluster-info").stdout


def test_version_matches_client(kubectl):
    result = kubectl("version", "-o", "json")
    info = json.loads(result.stdout)
    assert info["serverVersion"]["minor"] == info["clientVersion"]["minor"]
    assert "skew" not in result.stderr
