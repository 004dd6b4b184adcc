"""Red team of the k8s app's API server and verdict: a request that would cost the server (and so the harness)
without bound, and writes to what the judge reads. Written as agent replies, run through the real environment
(real boxes, real kubectl, the embedded API server in its own network namespace). One attack per test. Run as root
and, by test_k8s_unprivileged.py, as an unprivileged user."""

from __future__ import annotations

import json
import time

from .conftest import act, needs_boxes

pytestmark = needs_boxes

#: each op appends spec.ingress to itself, doubling the policy: 22 ops stalled the harness for minutes.
#: 17 are far past a real server's 3 MiB copy budget, yet the unbounded server of old got through them fast.
DOUBLINGS = 17


def pod_of(env, workload: str) -> dict:
    return next(pod for pod in env.backend.server.list_objects("Pod", "default")
                if pod["metadata"]["name"].startswith(f"{workload}-"))


def test_a_json_patch_that_doubles_a_policy_is_refused_and_the_harness_reads_on(k8s):
    server = k8s.backend.server
    before = server.get_object("NetworkPolicy", "default", "adservice")
    doubling = json.dumps([{"op": "copy", "from": "/spec/ingress", "path": "/spec/ingress/-"}] * DOUBLINGS)
    started = time.monotonic()
    attack = act(k8s, f"kubectl patch networkpolicy adservice --type=json -p '{doubling}'")
    assert "accumulated size increase of copy" in attack.output  # the 422 a real server gives
    assert server.get_object("NetworkPolicy", "default", "adservice") == before
    assert attack.check_s < 5 and not attack.violations
    # the server and the harness's reading of it answer at once after the attack
    after = act(k8s, "kubectl get networkpolicy adservice -o jsonpath='{.spec.ingress[*].ports[*].port}'")
    assert after.output == "1" and time.monotonic() - started < 15


def test_objects_written_without_end_stop_at_the_namespace_quota_and_the_harness_reads_on(k8s):
    """Each object is capped, so the attack is many of them: 12 MB of ConfigMaps from one step's loop."""
    from pytest_netarena.kube.limits import MAX_NAMESPACE_BYTES

    server = k8s.backend.server
    attack = act(k8s, "head -c 1000000 /dev/zero | tr '\\0' x > /tmp/pad && for i in $(seq 1 12); do "
                      "kubectl create configmap pad$i --from-file=a=/tmp/pad 2>&1 | tail -c 200; done")
    assert "exceeded quota: netarena-namespace-bytes" in attack.output, attack.output[-600:]
    made = [c for c in server.list_objects("ConfigMap", "default") if c["metadata"]["name"].startswith("pad")]
    assert 0 < len(made) < 9 and server.store.namespace_bytes("default") <= MAX_NAMESPACE_BYTES
    assert attack.check_s < 5
    after = act(k8s, "kubectl get networkpolicy adservice -o name")
    assert after.output.strip() == "networkpolicy.networking.k8s.io/adservice"


def test_rewriting_a_pods_owner_is_a_named_violation(k8s):
    """The matrix picks each workload's probe pods by their owner: a rewrite is a change the judge sees."""
    name = pod_of(k8s, "paymentservice")["metadata"]["name"]
    owner = [{"op": "replace", "path": "/metadata/ownerReferences/0/name", "value": "emailservice-0"}]
    attack = act(k8s, f"kubectl patch pod {name} --type=json -p '{json.dumps(owner)}'")
    assert pod_of(k8s, "paymentservice")["metadata"]["ownerReferences"][0]["name"] == "emailservice-0"
    assert f"Pod default/{name} was modified" in attack.violations
    judgement = k8s.judge()
    assert not judgement.correct and f"Pod default/{name} was modified" in judgement.details


def test_rewriting_a_pods_address_is_a_named_violation(k8s):
    """ipBlock rules match pods by status.podIP, which the status subresource lets a namespace editor write."""
    name = pod_of(k8s, "frontend")["metadata"]["name"]
    address = {"status": {"podIP": "10.99.0.1", "podIPs": [{"ip": "10.99.0.1"}]}}
    attack = act(k8s, f"kubectl patch pod {name} --subresource=status --type=merge -p '{json.dumps(address)}'")
    assert pod_of(k8s, "frontend")["status"]["podIP"] == "10.99.0.1"
    assert f"Pod default/{name} was modified" in attack.violations
    assert not k8s.judge().correct
