"""Several named nodes through the real kubectl: declared with labels, taints and capacity, their Leases (kubectl
describe node), cordon and uncordon, pods placed only where they may go, and the ways a cluster is declared
(kube serve --node, a Harbor task's k3s services)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.k3s import from_compose
from pytest_netarena.kube.nodes import parse_option

from .conftest import kubectl_for, mask

NODES = ["pool-a-1,label=pool=a,cpu=4,memory=16Gi", "pool-a-2,label=pool=a",
         "gpu-1,label=pool=gpu,taint=accelerator=true:NoSchedule"]


@pytest.fixture(scope="module")
def farm():
    server = EmbeddedAPIServer(nodes=[parse_option(n) for n in NODES]).start()
    server.snapshot()
    yield server
    server.stop()


@pytest.fixture
def kc(farm, kubectl_bin, tmp_path):
    farm.reset()
    return kubectl_for(farm, kubectl_bin, tmp_path)


def _placed(server, namespace: str = "default") -> dict[str, str | None]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in server.list_objects("Pod", namespace)}


def test_declared_nodes_have_their_labels_taints_capacity_and_leases(kc):
    nodes = mask(kc("get", "nodes", "-L", "pool").stdout).splitlines()
    assert [line.split("  ")[0] for line in nodes[1:]] == ["gpu-1", "pool-a-1", "pool-a-2"]
    assert all("  Ready  " in line for line in nodes[1:]) and nodes[2].endswith("  a")
    assert kc("get", "node", "pool-a-1", "-o", "jsonpath={.status.capacity.cpu}/{.status.allocatable.memory}"
              ).stdout == "4/16Gi"
    assert kc("get", "node", "gpu-1", "-o", "jsonpath={.spec.taints[0].key}={.spec.taints[0].value}:"
              "{.spec.taints[0].effect}").stdout == "accelerator=true:NoSchedule"
    addresses = kc("get", "nodes", "-o", "jsonpath={.items[*].status.addresses[0].address}").stdout.split()
    assert len(set(addresses)) == 3
    described = kc("describe", "node", "pool-a-2").stdout
    assert "Lease:\n  HolderIdentity:  pool-a-2" in described
    assert "MemoryPressure   False" in described and "Ready            True" in described
    leases = mask(kc("get", "leases", "-n", "kube-node-lease").stdout)
    assert leases.splitlines()[1:] == ["gpu-1  gpu-1  <age>", "pool-a-1  pool-a-1  <age>", "pool-a-2  pool-a-2  <age>"]


def test_pods_go_where_they_may_and_wait_when_nothing_fits(kc, farm):
    kc("create", "deployment", "web", "--image=nginx", "--replicas=4")
    assert set(_placed(farm).values()) == {"pool-a-1", "pool-a-2"}  # spread, never on the tainted node
    kc("apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: trainer}
        spec:
          nodeSelector: {pool: gpu}
          tolerations: [{key: accelerator, operator: Exists, effect: NoSchedule}]
          containers: [{name: t, image: busybox}]
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: lost}
        spec:
          nodeSelector: {pool: nowhere}
          containers: [{name: t, image: busybox}]
        """))
    placed = _placed(farm)
    assert placed["trainer"] == "gpu-1" and placed["lost"] is None
    assert mask(kc("get", "pod", "lost").stdout).splitlines()[1].startswith("lost  0/1  Pending")
    assert ("0/3 nodes are available: 1 node(s) had untolerated taint {accelerator: true}, 2 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
            "scheduling.") in kc("get", "events", "--field-selector", "reason=FailedScheduling").stdout
    assert kc("get", "pod", "lost", "-o", 'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}'
              ).stdout == "Unschedulable"
    kc("label", "node", "pool-a-1", "pool=nowhere", "--overwrite")
    assert _placed(farm)["lost"] == "pool-a-1"  # a node write places the waiting pod


def test_cordon_and_uncordon(kc, farm):
    assert kc("cordon", "pool-a-1").stdout == "node/pool-a-1 cordoned\n"
    row = mask(kc("get", "node", "pool-a-1").stdout).splitlines()[1]
    assert row.startswith("pool-a-1  Ready,SchedulingDisabled")
    assert kc("get", "node", "pool-a-1", "-o", "jsonpath={.spec.taints[*].key}").stdout == \
        "node.kubernetes.io/unschedulable"
    kc("create", "deployment", "web", "--image=nginx", "--replicas=3")
    assert set(_placed(farm).values()) == {"pool-a-2"}
    kc("uncordon", "pool-a-1")
    assert kc("get", "node", "pool-a-1", "-o", "jsonpath={.spec}").stdout.count("taints") == 0
    kc("scale", "deployment", "web", "--replicas=4")
    assert "pool-a-1" in _placed(farm).values()


def test_kube_serve_declares_nodes_and_refuses_a_bad_declaration(tmp_path):
    run = [sys.executable, "-m", "pytest_netarena.cli", "kube", "serve"]
    bad = subprocess.run([*run, "--node", "a,taint=x:Sometimes"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid taint 'x:Sometimes'" in bad.stderr
    twice = subprocess.run([*run, "--node", "a", "--node", "a"], capture_output=True, text=True, timeout=60)
    assert twice.returncode == 2 and "two nodes have the same name" in twice.stderr
    spec = parse_option("edge-1,label=zone=b,taint=dedicated=edge:NoExecute,cpu=2,pods=30,role=control-plane")
    assert (spec.labels, spec.taints, spec.capacity, spec.control_plane) == (
        {"zone": "b"}, [{"key": "dedicated", "value": "edge", "effect": "NoExecute"}], {"cpu": "2", "pods": "30"},
        True)


def test_a_harbor_tasks_k3s_services_are_its_nodes(tmp_path):
    (tmp_path / "environment").mkdir()
    (tmp_path / "environment" / "docker-compose.yaml").write_text(textwrap.dedent("""\
        services:
          k3s:
            image: rancher/k3s:v1.30.6-k3s1
            command: [server, --disable=traefik, --node-name=control, --node-label=pool=system]
          worker:
            image: rancher/k3s:v1.30.6-k3s1
            command: [agent, --server=https://k3s:6443, --node-name, worker-1, "--node-taint=gpu=true:NoSchedule"]
          bootstrap:
            image: bitnami/kubectl:1.30
        """))
    nodes, profile = from_compose(tmp_path)
    assert [(n.name, n.control_plane, n.labels, n.taints) for n in nodes] == [
        ("control", True, {"pool": "system"}, []),
        ("worker-1", False, {}, [{"key": "gpu", "value": "true", "effect": "NoSchedule"}])]
    assert not profile.has("traefik") and profile.has("local-storage")
    server = EmbeddedAPIServer(nodes=nodes, profile=profile)
    labels = server.get_object("Node", None, "control")["metadata"]["labels"]
    assert labels["node-role.kubernetes.io/control-plane"] == "true" and labels["node.kubernetes.io/instance-type"] == "k3s"
    assert server.get_object("Deployment", "kube-system", "traefik") is None
    assert server.get_object("StorageClass", None, "local-path") is not None
