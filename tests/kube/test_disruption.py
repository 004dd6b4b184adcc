"""PodDisruptionBudgets and the Eviction API through the real kubectl and raw HTTP: the budget's status, an
eviction it allows (201) or refuses (429 with the real message and cause), kubectl drain that evicts, waits and
gives up, and the validation messages of a budget."""

from __future__ import annotations

import json
import textwrap

import pytest

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.nodes import parse_option

from .conftest import call, kubectl_for, mask

PDB = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  minAvailable: MIN
  selector: {matchLabels: {app: web}}
"""


@pytest.fixture(scope="module")
def pair():
    server = EmbeddedAPIServer(nodes=[parse_option("old-node"), parse_option("new-node")]).start()
    server.snapshot()
    yield server
    server.stop()


@pytest.fixture
def kc(pair, kubectl_bin, tmp_path):
    pair.reset()
    run = kubectl_for(pair, kubectl_bin, tmp_path)
    run("create", "deployment", "web", "--image=nginx", "--replicas=3")
    return run


def _evict(server, pod: str, dry_run: bool = False) -> tuple[int, dict]:
    body = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod, "namespace": "default"}}
    if dry_run:
        body["deleteOptions"] = {"dryRun": ["All"]}
    return call(server, "POST", f"/api/v1/namespaces/default/pods/{pod}/eviction", body)


def _pods(server) -> list[str]:
    return [p["metadata"]["name"] for p in server.list_objects("Pod", "default")]


def test_the_budget_counts_healthy_pods_and_an_eviction_spends_it(kc, pair):
    kc("apply", "-f", "-", input=PDB.replace("MIN", "2"))
    assert mask(kc("get", "pdb").stdout).splitlines()[1] == "web  2  N/A  1  <age>"
    status = json.loads(kc("get", "pdb", "web", "-o", "jsonpath={.status}").stdout)
    assert (status["currentHealthy"], status["desiredHealthy"], status["expectedPods"]) == (3, 2, 3)
    assert status["conditions"][0]["reason"] == "SufficientPods"
    victim = _pods(pair)[0]
    assert _evict(pair, victim, dry_run=True)[0] == 201 and victim in _pods(pair)
    code, body = _evict(pair, victim)
    assert code == 201 and body["status"] == "Success"
    assert victim not in _pods(pair) and len(_pods(pair)) == 3  # its ReplicaSet made another


def test_an_eviction_the_budget_forbids_is_429_with_the_real_words(kc, pair):
    kc("apply", "-f", "-", input=PDB.replace("MIN", "3"))
    victim = _pods(pair)[0]
    code, body = _evict(pair, victim)
    assert code == 429 and body["reason"] == "TooManyRequests"
    assert body["message"] == "Cannot evict pod as it would violate the pod's disruption budget."
    assert body["details"]["causes"] == [{"reason": "DisruptionBudget",
                                          "message": "The disruption budget web needs 3 healthy pods and has 3 "
                                                     "currently"}]
    raw = kc("create", "--raw", f"/api/v1/namespaces/default/pods/{victim}/eviction", "-f", "-", check=False,
             input=json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": victim}}))
    assert "Error from server (TooManyRequests): Cannot evict pod as it would violate the pod's disruption budget." \
        in raw.stderr
    assert victim in _pods(pair)


def test_drain_evicts_what_the_budget_allows_and_waits_for_the_rest(kc, pair):
    on_old = [n for n, node in ((p["metadata"]["name"], p["spec"]["nodeName"])
                                for p in pair.list_objects("Pod", "default")) if node == "old-node"]
    assert on_old
    kc("apply", "-f", "-", input=PDB.replace("MIN", "3"))
    blocked = kc("drain", "old-node", "--ignore-daemonsets", "--timeout=3s", check=False, timeout=60)
    assert blocked.returncode == 1 and "node/old-node cordoned" in blocked.stdout
    assert "Cannot evict pod as it would violate the pod's disruption budget." in blocked.stderr
    kc("apply", "-f", "-", input=PDB.replace("MIN", "2"))
    drained = kc("drain", "old-node", "--ignore-daemonsets", "--timeout=20s", timeout=60)
    assert drained.stdout.strip().endswith("node/old-node drained")
    assert {p["spec"]["nodeName"] for p in pair.list_objects("Pod", "default")} == {"new-node"}
    assert mask(kc("get", "node", "old-node").stdout).splitlines()[1].startswith("old-node  Ready,SchedulingDisabled")


def test_a_budget_is_validated_with_the_real_messages(kc):
    both = textwrap.dedent("""\
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: bad}
        spec: {minAvailable: 1, maxUnavailable: 150%, selector: {matchLabels: {app: web}}}
        """)
    refused = kc("apply", "-f", "-", input=both, check=False)
    assert "minAvailable and maxUnavailable cannot be both set" in refused.stderr
    assert 'spec.maxUnavailable: Invalid value: "150%": must not be greater than 100%' in refused.stderr
    assert kc("create", "pdb", "api", "--selector=app=api", "--max-unavailable=1").stdout == \
        "poddisruptionbudget.policy/api created\n"
