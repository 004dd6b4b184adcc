"""The scheduler and the node-wide controllers through the real kubectl, on several named nodes: the real
FailedScheduling message, node affinity and tolerations that place a pod, resource requests against allocatable,
cordon, `kubectl drain` evicting through PodDisruptionBudgets and the pods placed again, a DaemonSet's pod per
eligible node. The API server alone (pods are placed and marked Running; nothing here needs them to run)."""

from __future__ import annotations

import json
import textwrap

import pytest

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.nodes import parse_option

from .conftest import kubectl_for

NODES = ["cp,role=control-plane,label=pool=general,cpu=2,memory=4Gi", "gpu-1,label=pool=gpu,label=gpu=t4,"
         "taint=accelerator=enabled:NoSchedule,cpu=4", "general-1,label=pool=general,cpu=1,memory=2Gi"]


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


def _pod(name: str, **spec) -> str:
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"containers": [{"name": "main", "image": "busybox", "command": ["sleep", "3600"]}], **spec}}
    return json.dumps(body)


def _node_of(farm, name: str) -> str | None:
    return farm.get_object("Pod", "default", name)["spec"].get("nodeName")


def test_a_pod_no_node_can_take_stays_pending_with_the_schedulers_words(farm, kc):
    kc("apply", "-f", "-", input=_pod("trainer", nodeSelector={"gpu": "t4"}))
    pod = farm.get_object("Pod", "default", "trainer")
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    condition = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    message = ("0/3 nodes are available: 1 node(s) had untolerated taint {accelerator: enabled}, 2 node(s) didn't "
               "match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful "
               "for scheduling.")
    assert (condition["status"], condition["reason"], condition["message"]) == ("False", "Unschedulable", message)
    events = kc("get", "events", "--field-selector", "involvedObject.name=trainer").stdout
    assert "FailedScheduling" in events and "untolerated taint {accelerator: enabled}" in events
    kc("delete", "pod", "trainer")
    tolerated = [{"key": "accelerator", "operator": "Equal", "value": "enabled", "effect": "NoSchedule"}]
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["t4", "a100"]}]}]}}}
    kc("apply", "-f", "-", input=_pod("trainer", tolerations=tolerated, affinity=affinity))
    assert _node_of(farm, "trainer") == "gpu-1"


def test_requests_are_held_against_allocatable(farm, kc):
    big = [{"name": "main", "image": "busybox", "command": ["sleep", "3600"],
            "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}]
    kc("apply", "-f", "-", input=_pod("first", containers=big, nodeSelector={"pool": "general"}))
    assert _node_of(farm, "first") == "cp"  # general-1 has one CPU only
    kc("apply", "-f", "-", input=_pod("second", containers=big, nodeSelector={"pool": "general"}))
    pod = farm.get_object("Pod", "default", "second")
    message = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")["message"]
    assert message == ("0/3 nodes are available: 1 node(s) had untolerated taint {accelerator: enabled}, 2 "
                       "Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for "
                       "scheduling, 2 No preemption victims found for incoming pod.")
    kc("delete", "pod", "first")
    assert _node_of(farm, "second") == "cp"  # the room freed places the waiting pod


def test_cordon_and_drain_move_the_pods_through_the_eviction_api(farm, kc):
    kc("create", "deployment", "api", "--image=busybox", "--replicas=2", "--", "sleep", "3600")
    kc("patch", "deployment", "api", "-p", json.dumps({"spec": {"template": {"spec": {"nodeSelector": {
        "pool": "general"}}}}}))
    kc("apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: api}
        spec: {minAvailable: 1, selector: {matchLabels: {app: api}}}
        """))
    placed = {p["spec"]["nodeName"] for p in farm.list_objects("Pod", "default")}
    assert placed <= {"cp", "general-1"}
    kc("cordon", "general-1")
    assert "SchedulingDisabled" in kc("get", "node", "general-1").stdout
    drained = kc("drain", "general-1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=30s")
    assert "node/general-1 drained" in drained.stdout
    pods = farm.list_objects("Pod", "default")
    assert len(pods) == 2 and {p["spec"]["nodeName"] for p in pods} == {"cp"}
    kc("run", "late", "--image=busybox", "--overrides",
       json.dumps({"spec": {"nodeSelector": {"kubernetes.io/hostname": "general-1"}}}), "--", "sleep", "3600")
    assert "node(s) were unschedulable" in kc("get", "events", "--field-selector",
                                              "involvedObject.name=late").stdout
    kc("uncordon", "general-1")
    assert _node_of(farm, "late") == "general-1"


def test_a_daemon_set_runs_a_pod_on_each_node_it_may(farm, kc):
    kc("apply", "-f", "-", input=textwrap.dedent("""\
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: agent}
        spec:
          selector: {matchLabels: {app: agent}}
          template:
            metadata: {labels: {app: agent}}
            spec: {containers: [{name: agent, image: busybox, command: [sleep, "3600"]}]}
        """))
    pods = farm.list_objects("Pod", "default")
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["cp", "general-1"]  # not the tainted gpu node
    status = farm.get_object("DaemonSet", "default", "agent")["status"]
    assert (status["desiredNumberScheduled"], status["currentNumberScheduled"], status["numberReady"]) == (2, 2, 2)
    kc("patch", "daemonset", "agent", "--type=json", "-p", json.dumps([{"op": "add", "path": "/spec/template/spec/"
       "tolerations", "value": [{"key": "accelerator", "operator": "Exists"}]}]))
    assert sorted(p["spec"]["nodeName"] for p in farm.list_objects("Pod", "default")) == ["cp", "general-1", "gpu-1"]
    kc("label", "node", "general-1", "pool=retired", "--overwrite")
    kc("patch", "daemonset", "agent", "--type=json", "-p", json.dumps([{"op": "add", "path": "/spec/template/spec/"
       "nodeSelector", "value": {"pool": "general"}}]))
    assert sorted(p["spec"]["nodeName"] for p in farm.list_objects("Pod", "default")) == ["cp"]
    assert "rolled out" in kc("rollout", "status", "daemonset/agent", "--timeout=10s").stdout
