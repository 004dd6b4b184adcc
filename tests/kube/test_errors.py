"""Bad input gets precise 4xx Status errors, refused verbs fail fast, and the server keeps serving."""

from __future__ import annotations

import json
import time

import pytest

from .conftest import call

BAD_POLICIES = {
    "cidr": ('{"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/33"}}]}]}',
             'spec.ingress[0].from[0].ipBlock.cidr: Invalid value: "10.0.0.0/33": must be a valid CIDR value'),
    "port": ('{"podSelector": {}, "ingress": [{"ports": [{"port": 70000}]}]}',
             "spec.ingress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"),
    "endport": ('{"podSelector": {}, "egress": [{"ports": [{"port": 8080, "endPort": 80}]}]}',
                "spec.egress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`"),
    "operator": ('{"podSelector": {"matchExpressions": [{"key": "a", "operator": "Maybe", "values": ["x"]}]}}',
                 'spec.podSelector.matchExpressions[0].operator: Invalid value: "Maybe": not a valid selector operator'),
    "protocol": ('{"podSelector": {}, "ingress": [{"ports": [{"protocol": "ICMP", "port": 1}]}]}',
                 'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"'),
    "except": ('{"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}]}]}',
               'spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "11.0.0.0/16": must be a strict subset of `cidr`'),
}


@pytest.mark.parametrize("case", sorted(BAD_POLICIES))
def test_invalid_network_policies_are_422_with_causes(kubectl, case):
    spec, message = BAD_POLICIES[case]
    manifest = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                           "metadata": {"name": "bad"}, "spec": json.loads(spec)})
    result = kubectl("apply", "-f", "-", input=manifest, check=False)
    assert result.returncode == 1
    assert f'The NetworkPolicy "bad" is invalid: {message}' in result.stderr
    assert kubectl("get", "netpol").stderr.strip() == "No resources found in default namespace."


def test_invalid_policy_status_shape(cluster):
    body = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "p"},
                       "spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 0}]}]}}).encode()
    code, status = call(cluster, "POST", "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies", body)
    assert code == 422 and status["reason"] == "Invalid" and status["kind"] == "Status"
    assert status["details"] == {"name": "p", "kind": "NetworkPolicy", "group": "networking.k8s.io", "causes": [
        {"reason": "FieldValueInvalid", "message": "Invalid value: 0: must be between 1 and 65535, inclusive",
         "field": "spec.ingress[0].ports[0].port"}]}
    assert status["message"] == ('NetworkPolicy.networking.k8s.io "p" is invalid: spec.ingress[0].ports[0].port: '
                                 "Invalid value: 0: must be between 1 and 65535, inclusive")


def test_malformed_bodies_are_400_and_server_keeps_serving(cluster):
    for body, media in ((b"{not json", "application/json"), (b"a: [b", "application/yaml"),
                        (b"[1, 2]", "application/json"), (b"k8s\x00\xff\xff", "application/vnd.kubernetes.protobuf")):
        code, status = call(cluster, "POST", "/api/v1/namespaces/default/configmaps", body, media)
        assert code == 400 and status["reason"] == "BadRequest", (body, status)
    code, status = call(cluster, "POST", "/api/v1/namespaces/default/configmaps", b"<xml/>", "application/xml")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"
    code, status = call(cluster, "POST", "/api/v1/namespaces/default/configmaps",
                        b'{"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": 1}}')
    assert code == 400 and "cannot unmarshal number into Go struct field ConfigMap.data of type string" in status["message"]
    code, status = call(cluster, "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
                        b'{"kind": "ConfigMap", "metadata": {"name": "c"}, "foo": 1}')
    assert code == 400 and status["message"].endswith('strict decoding error: unknown field "foo"')
    code, status = call(cluster, "POST", "/api/v1/namespaces/nowhere/configmaps", b'{"metadata": {"name": "c"}}')
    assert code == 404 and status["message"] == 'namespaces "nowhere" not found'
    code, status = call(cluster, "POST", "/api/v1/namespaces/default/widgets", b"{}")
    assert code == 404 and status["message"] == "the server could not find the requested resource"
    code, status = call(cluster, "POST", "/api/v1/namespaces/default/configmaps", b'{"metadata": {"name": "c"}}')
    assert code == 201 and status["metadata"]["name"] == "c"


def test_unknown_kinds_and_bad_yaml_via_kubectl(kubectl):
    unknown = kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: Widget\nmetadata: {name: w}\n", check=False)
    assert unknown.returncode == 1 and 'no matches for kind "Widget" in version "v1"' in unknown.stderr
    broken = kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: ConfigMap\nmetadata: [\n", check=False)
    assert broken.returncode == 1 and "error" in broken.stderr
    bad_pod = kubectl("apply", "-f", "-", input="apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {}\n",
                      check=False)
    assert 'The Pod "p" is invalid: spec.containers: Required value' in bad_pod.stderr
    assert kubectl("get", "ns", "default", "-o", "name").stdout == "namespace/default\n"


@pytest.mark.parametrize("args, message", [
    (("logs", "web-x"), "is not supported by this embedded Kubernetes API server"),
    (("exec", "web-x", "--", "ls"), "is not supported by this embedded Kubernetes API server"),
    (("port-forward", "web-x", "8080:80"), "is not supported by this embedded Kubernetes API server"),
    (("attach", "web-x"), "is not supported by this embedded Kubernetes API server"),
    (("top", "pods"), "Metrics API not available"),
])
def test_refused_verbs_fail_fast_with_a_clear_error(kubectl, cluster, args, message):
    cluster.apply_object({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-x"},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    started = time.monotonic()
    result = kubectl(*args, input="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", check=False, timeout=20)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert time.monotonic() - started < 10
