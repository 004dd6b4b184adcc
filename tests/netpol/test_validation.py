"""Invalid NetworkPolicies are rejected with the offending field and a precise message."""

from __future__ import annotations

import pytest

from pytest_netarena.netpol import PolicyValidationError, compile_policy

from .netpol_xyz import netpol


def ingress_with(rule):
    return netpol("bad", "x", {}, ingress=[rule])


CASES = [
    (ingress_with({"from": [{"ipBlock": {"cidr": "10.0.0/33"}}]}), "spec.ingress[0].from[0].ipBlock.cidr", "invalid CIDR"),
    (ingress_with({"from": [{"ipBlock": {"cidr": "10.0.0.1"}}]}), "spec.ingress[0].from[0].ipBlock.cidr", "invalid CIDR"),
    (ingress_with({"from": [{"ipBlock": {}}]}), "spec.ingress[0].from[0].ipBlock.cidr", "is required"),
    (ingress_with({"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24"]}}]}),
     "spec.ingress[0].from[0].ipBlock.except[0]", "strict subset"),
    (ingress_with({"from": [{"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.0.0.0/16"]}}]}),
     "spec.ingress[0].from[0].ipBlock.except[0]", "strict subset"),
    (ingress_with({"from": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}), "spec.ingress[0].from[0]", "ipBlock together"),
    (ingress_with({"from": [{}]}), "spec.ingress[0].from[0]", "must specify a peer"),
    (ingress_with({"ports": [{"port": 0}]}), "spec.ingress[0].ports[0].port", "between 1 and 65535"),
    (ingress_with({"ports": [{"port": 65536}]}), "spec.ingress[0].ports[0].port", "between 1 and 65535"),
    (ingress_with({"ports": [{"port": "80"}]}), "spec.ingress[0].ports[0].port", "at least one letter"),
    (ingress_with({"ports": [{"port": "Web_Port"}]}), "spec.ingress[0].ports[0].port", "lowercase"),
    (ingress_with({"ports": [{"port": "a-very-long-port-name"}]}), "spec.ingress[0].ports[0].port", "15 characters"),
    (ingress_with({"ports": [{"endPort": 90}]}), "spec.ingress[0].ports[0].endPort", "numeric port"),
    (ingress_with({"ports": [{"port": "http", "endPort": 90}]}), "spec.ingress[0].ports[0].endPort", "numeric port"),
    (ingress_with({"ports": [{"port": 90, "endPort": 80}]}), "spec.ingress[0].ports[0].endPort", "greater than or equal"),
    (ingress_with({"ports": [{"port": 90, "endPort": 70000}]}), "spec.ingress[0].ports[0].endPort", "between 1 and 65535"),
    (ingress_with({"ports": [{"port": 80, "protocol": "ICMP"}]}), "spec.ingress[0].ports[0].protocol", "unsupported protocol"),
    (ingress_with({"ports": [{"port": 80, "protocol": "tcp"}]}), "spec.ingress[0].ports[0].protocol", "unsupported protocol"),
    (ingress_with({"from": [{"podSelector": {"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]}}]}),
     "spec.ingress[0].from[0].podSelector.matchExpressions[0].operator", "unknown operator 'Equals'"),
    (ingress_with({"from": [{"podSelector": {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["b"]}]}}]}),
     "spec.ingress[0].from[0].podSelector.matchExpressions[0].values", "must be empty when operator is Exists"),
    (ingress_with({"from": [{"podSelector": {"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["b"]}]}}]}),
     "spec.ingress[0].from[0].podSelector.matchExpressions[0].values", "must be empty"),
    (ingress_with({"from": [{"namespaceSelector": {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}}]}),
     "spec.ingress[0].from[0].namespaceSelector.matchExpressions[0].values", "must be non-empty when operator is In"),
    (ingress_with({"from": [{"podSelector": {"matchLabels": {"bad key!": "x"}}}]}), "spec.ingress[0].from[0].podSelector.matchLabels", "invalid label key"),
    (ingress_with({"from": [{"podSelector": {"matchLabels": {"app": "no spaces"}}}]}), "spec.ingress[0].from[0].podSelector.matchLabels", "invalid label value"),
    (ingress_with({"form": [{"podSelector": {}}]}), "spec.ingress[0]", "unknown field"),
    (netpol("bad", "x", {}, types=["Inbound"]), "spec.policyTypes[0]", "unsupported value 'Inbound'"),
    (netpol("bad", "x", {}, types=["Ingress", "Egress", "Ingress"]), "spec.policyTypes", "more than two"),
    (netpol("bad", "x", {}, egress=[{"to": [{"ipBlock": {"cidr": "fd00::/8", "except": ["10.0.0.0/24"]}}]}]),
     "spec.egress[0].to[0].ipBlock.except[0]", "strict subset"),
    (netpol("bad", "x", {}, egress={"to": []}), "spec.egress", "must be a list"),
    ({"kind": "NetworkPolicy", "metadata": {"namespace": "x"}, "spec": {}}, "metadata.name", "is required"),
]


@pytest.mark.parametrize("policy, path, message", CASES, ids=[f"{i}-{c[1]}" for i, c in enumerate(CASES)])
def test_invalid_policy_is_rejected_precisely(policy, path, message):
    with pytest.raises(PolicyValidationError) as caught:
        compile_policy(policy)
    assert caught.value.path == path
    assert message in str(caught.value)
    assert str(caught.value).startswith("NetworkPolicy x/")


def test_valid_corner_values_are_accepted():
    policy = compile_policy(netpol("ok", "x", {}, ingress=[{"ports": [{"port": 1}, {"port": 65535}, {"port": 80, "endPort": 80},
                                                                      {"port": "h2c", "protocol": "SCTP"}, {"protocol": "UDP"}],
                                                            "from": [{"ipBlock": {"cidr": "192.168.242.213/24", "except": ["192.168.242.0/25"]}}]}]))
    assert [str(p) for p in policy.ingress[0].ports] == ["1/TCP", "65535/TCP", "80-80/TCP", "h2c/SCTP", "all/UDP"]
    assert str(policy.ingress[0].peers[0]) == "ipBlock 192.168.242.0/24 except 192.168.242.0/25"
