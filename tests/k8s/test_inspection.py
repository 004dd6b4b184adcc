"""A reply holding a read-only inspection and a change runs the inspection alone; no part of a change ever runs."""

from __future__ import annotations

import json

import pytest

from pytest_netarena.apps.k8s.guard import read_only
from pytest_netarena.apps.k8s.workloads.model import online_boutique
from pytest_netarena.apps.k8s.replies import read_reply
from pytest_netarena.core.types import Query

CP_AD = {"type": "change_port", "policy": "adservice", "new_port": 1}
QUERY = Query("k8s", 1, "change_port", 0, 1, {"app": "online-boutique", "faults": [CP_AD]})
INSPECT = "kubectl get networkpolicy adservice -o yaml"
SPEC = json.dumps([{"op": "replace", "path": "/spec",
                    "value": online_boutique().healthy_policies()["adservice"]["spec"]}])
FIX = f"kubectl patch networkpolicy adservice --type=json -p '{SPEC}'"
DELETE = "kubectl delete networkpolicy emailservice"

INSPECT_THEN_FIX = (f"First check the rule:\n```bash\n{INSPECT}\n```\nIf it shows port 1 instead of 9555, "
                    f"the fix is:\n```bash\n{FIX}\n```")


@pytest.mark.parametrize("script,reads", [
    ("kubectl get networkpolicy -o yaml", True),
    ("kubectl -n default --request-timeout 5s get pods | grep Running | wc -l", True),
    ("kubectl describe networkpolicy adservice  # the rules", True),
    ("kubectl get networkpolicy -o json | jq -r '.items[].metadata.name' | head -50", True),
    ("kubectl auth can-i patch networkpolicy", True),
    ("kubectl rollout status deploy/frontend", True),
    ("kubectl logs deploy/frontend --tail=5; kubectl explain networkpolicy.spec", True),
    ("kubectl get pod $(kubectl get pods -o name | head -1)", True),
    ("kubectl --request_timeout get config view", True),  # `get` is the timeout's value: config view runs
    ("kubectl get networkpolicy -o json | jq . && kubectl delete networkpolicy x", False),
    ("kubectl get networkpolicy -o name | xargs kubectl delete", False),
    ("kubectl rollout restart deploy/frontend", False),
    ("kubectl auth reconcile -f -", False),
    ("kubectl label networkpolicy a x=y --dry-run=client", False),
    ("cat <<EOF | kubectl apply -f -\nkind: NetworkPolicy\nEOF", False),
    ("for p in a b; do kubectl get networkpolicy $p; done", False),  # a loop: cannot tell, so a change
    ("echo kubectl get pods", False),  # runs no kubectl
])
def test_read_only_parses_the_kubectl_verbs_and_the_tools_of_a_pipeline(script, reads):
    assert read_only(script) is reads


def test_an_inspection_and_a_change_read_as_the_inspection_with_the_change_held():
    action = read_reply(INSPECT_THEN_FIX)
    assert not action.refused and action.command == INSPECT and action.held == FIX
    # in either order, and in one fence
    assert read_reply(f"```bash\n{FIX}\n{INSPECT}\n```").command == INSPECT
    # a chain-of-thought reply still runs its last command
    assert read_reply(INSPECT_THEN_FIX, cot=True).command == FIX


@pytest.mark.parametrize("reply", [
    f"```bash\n{FIX}\n```\nand then\n```bash\n{DELETE}\n```",  # two changes
    f"```bash\nkubectl get networkpolicy -o name | xargs kubectl delete\n```\nthen\n```bash\n{FIX}\n```",
    f"```bash\n{INSPECT}\nkubectl get pods\n```",  # two inspections: still one action per turn
    f"```bash\n{INSPECT}\nkubectl get pods\n{FIX}\n```",  # two inspections and a change
])
def test_other_pairs_are_still_refused(reply):
    action = read_reply(reply)
    assert action.refused and "different commands" in action.refusal and action.held is None


def _policy_versions(env) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["resourceVersion"]
            for p in env.backend.server.list_objects("NetworkPolicy", "default")}


def test_the_inspection_runs_and_the_observation_says_the_change_was_not_run(k8s_env):
    k8s_env.reset(QUERY)
    before = _policy_versions(k8s_env)
    outcome = k8s_env.step(INSPECT_THEN_FIX)
    assert not outcome.refused and outcome.action == INSPECT
    assert "name: adservice" in outcome.output and "port: 1" in outcome.output  # the inspection ran
    assert "Not run: `kubectl patch networkpolicy adservice" in outcome.observation
    assert "the change was not run" in outcome.observation
    assert "unchanged: 1 of 121 flows mismatch" in outcome.observation
    assert _policy_versions(k8s_env) == before and not outcome.violations


def test_a_change_beside_an_inspection_that_mutates_runs_nothing(k8s_env):
    k8s_env.reset(QUERY)
    before = _policy_versions(k8s_env)
    mutating_look = "kubectl get networkpolicy emailservice -o name | xargs kubectl delete"
    outcome = k8s_env.step(f"Look:\n```bash\n{mutating_look}\n```\nthen fix:\n```bash\n{FIX}\n```")
    assert outcome.refused and "Nothing was run" in outcome.observation
    assert _policy_versions(k8s_env) == before
    two_changes = k8s_env.step(f"```bash\n{DELETE}\n```\nand\n```bash\n{FIX}\n```")
    assert two_changes.refused and _policy_versions(k8s_env) == before
