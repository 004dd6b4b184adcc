"""A CustomResourceDefinition cannot take a built-in kind's place: the harness and its verdicts read the built-in
objects (NetworkPolicies, Deployments, Pods), so a CRD of a built-in group, even with the approval annotation
protected groups need, is stored but never served; its kind's writes still land as the built-in kind's."""

from __future__ import annotations

import json
import subprocess
import urllib.request

import pytest

pytest.importorskip("kubernetes_validate")

from pytest_netarena.kube import EmbeddedAPIServer, KubectlNotFound, kubectl_env, kubectl_path

SHADOW = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "networkpolicies.networking.k8s.io",
                 "annotations": {"api-approved.kubernetes.io": "https://example.test/approved"}},
    "spec": {"group": "networking.k8s.io", "scope": "Namespaced",
             "names": {"plural": "networkpolicies", "singular": "networkpolicy", "kind": "NetworkPolicy"},
             "versions": [{"name": name, "served": True, "storage": name == "v1",
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}
                          for name in ("v1", "v2")]}}
#: a policy the built-in validation refuses (no such protocol) but a permissive CRD would store unseen
HIDDEN = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "allow-all"},
          "spec": {"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP"}]}]}}


def test_a_crd_of_a_built_in_group_never_takes_the_built_in_kinds_place(tmp_path):
    try:
        kubectl = kubectl_path()
    except KubectlNotFound as error:
        pytest.skip(str(error))
    with EmbeddedAPIServer() as server:
        env = kubectl_env(server, tmp_path)

        def run(*args, input=None):
            return subprocess.run([kubectl, *args], env=env, input=input, capture_output=True, text=True, timeout=60)

        made = run("apply", "-f", "-", input=json.dumps(SHADOW))
        assert made.returncode == 0, made.stderr  # stored, as a real server would
        with urllib.request.urlopen(server.url + "/apis/networking.k8s.io") as response:
            versions = [v["version"] for v in json.loads(response.read())["versions"]]
        assert versions == ["v1"]  # no v2 of the CRD's
        refused = run("apply", "-f", "-", input=json.dumps(HIDDEN))
        assert refused.returncode == 1 and 'Unsupported value: "ICMP"' in refused.stderr  # the built-in's rules
        good = dict(HIDDEN, spec={"podSelector": {}, "policyTypes": ["Ingress"]})
        assert run("apply", "-f", "-", input=json.dumps(good)).returncode == 0
        assert [p["metadata"]["name"] for p in server.list_objects("NetworkPolicy", "default")] == ["allow-all"]
        assert server.store.list("networkpolicies.networking.k8s.io") == []  # nothing went where the harness never reads
        assert run("get", "--raw", "/apis/networking.k8s.io/v2/namespaces/default/networkpolicies").returncode == 1
