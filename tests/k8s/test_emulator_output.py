"""kubectl against the embedded server prints what a real cluster prints: no null or empty fields the
API server omits, real defaulting, and ages counted from each object's creation time."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from pytest_netarena.core.types import Query

pytest.importorskip("kubernetes_validate")


def kubectl(env, *args, input=None):
    backend = env.backend
    result = subprocess.run([backend.kubectl, *args], input=input, env=backend.kubectl_env(), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def walk(value, path=""):
    """Every (path, value) of a JSON document."""
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from walk(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from walk(item, f"{path}[{index}]")


def omitted_fields(document) -> list[str]:
    """Fields a real API server never returns: nulls, empty lists, empty label/annotation maps.
    (A pod condition's lastProbeTime is null on real clusters too: a zero time, not an omitted field.)"""
    found = []
    for path, value in walk(document):
        if path.endswith(".lastProbeTime"):
            continue
        if value is None or value == [] or (value == {} and path.rsplit(".", 1)[-1] in (
                "labels", "annotations", "matchLabels", "selector", "nodeSelector")):
            found.append(path)
    return found


def remove_ingress(index=0):
    fault = {"type": "remove_ingress", "policy": "adservice"}
    return Query("k8s", 1, "remove_ingress", index, 1, {"app": "online-boutique", "faults": [fault]})


def test_a_policy_left_without_ingress_rules_prints_no_ingress_field(k8s_env):
    k8s_env.reset(remove_ingress())
    text = kubectl(k8s_env, "get", "networkpolicy", "adservice", "-o", "yaml")
    assert "ingress:" not in text and "[]" not in text
    assert "- Ingress" in text  # still isolated for ingress: the policy type stays
    spec = json.loads(kubectl(k8s_env, "get", "networkpolicy", "adservice", "-o", "json"))["spec"]
    assert "ingress" not in spec and spec["egress"] == [{}]


def test_nothing_the_server_omits_appears_in_any_listing(k8s_env):
    k8s_env.reset(remove_ingress())
    listing = json.loads(kubectl(k8s_env, "get", "deployments,replicasets,pods,services,networkpolicies,namespaces",
                                 "-A", "-o", "json"))
    assert listing["items"]
    for item in listing["items"]:
        assert omitted_fields(item) == [], item["metadata"]["name"]


HOLLOW = [
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
     "metadata": {"name": "hollow", "labels": None, "annotations": {}},
     "spec": {"podSelector": {"matchLabels": {}}, "ingress": [{"from": [], "ports": None}, {}], "egress": []}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hollow", "labels": {}},
     "spec": {"selector": {"matchLabels": {"app": "hollow"}}, "template": {
         "metadata": {"labels": {"app": "hollow"}, "annotations": None},
         "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "ports": [], "env": None}], "volumes": []}}}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hollow"},
     "spec": {"selector": {}, "ports": [{"port": 80}], "externalIPs": []}},
]


def test_created_objects_come_back_as_a_real_server_returns_them(k8s_env):
    k8s_env.reset(remove_ingress())
    kubectl(k8s_env, "create", "-f", "-", input="\n---\n".join(json.dumps(o) for o in HOLLOW))
    policy = json.loads(kubectl(k8s_env, "get", "networkpolicy", "hollow", "-o", "json"))
    # `from: []` means every source, like `{}`; empty selectors are values and stay
    assert policy["spec"] == {"podSelector": {}, "ingress": [{}, {}], "policyTypes": ["Ingress"]}
    assert "labels" not in policy["metadata"] and "annotations" not in policy["metadata"]
    for kind in ("deployment", "service", "networkpolicy"):
        document = json.loads(kubectl(k8s_env, "get", kind, "hollow", "-o", "json"))
        assert omitted_fields(document) == [], kind
    text = kubectl(k8s_env, "get", "deployment", "hollow", "-o", "yaml")
    assert "null" not in text and "[]" not in text


def test_an_empty_egress_list_does_not_make_a_policy_egress_isolating(k8s_env):
    """The server defaults policyTypes to Egress only when egress has rules (len(egress) != 0)."""
    k8s_env.reset(remove_ingress())
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "no-egress"},
              "spec": {"podSelector": {"matchLabels": {"app": "nobody"}}, "egress": []}}
    kubectl(k8s_env, "apply", "-f", "-", input=json.dumps(policy))
    spec = json.loads(kubectl(k8s_env, "get", "networkpolicy", "no-egress", "-o", "json"))["spec"]
    assert spec["policyTypes"] == ["Ingress"]


AGE = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def seconds(age: str) -> int:
    match = AGE.match(age)
    assert match and age, age
    days, hours, minutes, secs = (int(part or 0) for part in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + secs


def ages(env) -> dict[str, int]:
    rows = kubectl(env, "get", "networkpolicies", "--no-headers").splitlines()
    return {row.split()[0]: seconds(row.split()[-1]) for row in rows}


def test_ages_count_from_each_objects_creation(k8s_env):
    k8s_env.reset(remove_ingress())
    time.sleep(2)  # whole seconds apart: creation timestamps have second resolution
    kubectl(k8s_env, "create", "-f", "-", input=json.dumps(
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "newer"},
         "spec": {"podSelector": {"matchLabels": {"app": "nobody"}}}}))
    first = ages(k8s_env)
    assert first["adservice"] >= first["newer"] + 2  # the app's policies predate the episode's new one
    time.sleep(1)
    later = ages(k8s_env)
    # kubectl prints ages over ten minutes in whole minutes, so a worker's older policies may show no second passing
    assert later["newer"] >= first["newer"] + 1 and later["adservice"] >= first["adservice"]
    stamps = json.loads(kubectl(k8s_env, "get", "networkpolicies", "-o", "json"))["items"]
    created = {item["metadata"]["name"]: item["metadata"]["creationTimestamp"] for item in stamps}
    assert created["newer"] > created["adservice"]  # ISO-8601 UTC strings order like times
