"""Truth-table cases on the e2e x/y/z x a/b/c model, in the spirit of the upstream network-policy e2e suite."""

from __future__ import annotations

import pytest

from .netpol_xyz import PODS, Reachability, assert_reachability, make_model, netpol, pod_ip, pods_labelled

NS_NAME = "kubernetes.io/metadata.name"


def test_no_policies_everything_reachable_on_every_protocol():
    model = make_model()
    for protocol in ("TCP", "UDP", "SCTP"):
        for port in (80, 81):
            assert_reachability(model, Reachability(True), port, protocol)


def test_default_deny_ingress_in_one_namespace():
    model = make_model(netpol("deny-ingress", "x", {}, types=["Ingress"]))
    assert_reachability(model, Reachability(True).to("x", False))


def test_deny_all_ingress_without_policy_types_defaults_to_ingress():
    model = make_model(netpol("deny", "x", {}))
    expected = Reachability(True).to("x", False)
    for protocol in ("TCP", "UDP", "SCTP"):
        assert_reachability(model, expected, 81, protocol)


def test_allow_ingress_only_from_same_namespace():
    model = make_model(netpol("same-ns", "x", {}, ingress=[{"from": [{"podSelector": {}}]}]))
    expected = Reachability(True).to("x", False).to("x", True, sources=["x/a", "x/b", "x/c"])
    assert_reachability(model, expected)


def test_allow_from_namespace_by_label():
    model = make_model(netpol("from-y", "x", pods_labelled(pod="a"),
                              ingress=[{"from": [{"namespaceSelector": pods_labelled(ns="y")}]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=["y/a", "y/b", "y/c"])
    assert_reachability(model, expected)


def test_allow_from_namespace_by_its_name_label():
    model = make_model(netpol("from-z", "x", pods_labelled(pod="a"),
                              ingress=[{"from": [{"namespaceSelector": {"matchLabels": {NS_NAME: "z"}}}]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=["z/a", "z/b", "z/c"])
    assert_reachability(model, expected)


def test_allow_only_from_a_different_namespace_with_not_in():
    selector = {"matchExpressions": [{"key": "ns", "operator": "NotIn", "values": ["x"]}]}
    model = make_model(netpol("not-x", "x", pods_labelled(pod="a"), ingress=[{"from": [{"namespaceSelector": selector}]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=[p for p in PODS if not p.startswith("x/")])
    assert_reachability(model, expected)


def test_pod_and_namespace_selector_in_one_peer_are_anded():
    peer = {"podSelector": pods_labelled(pod="b"),
            "namespaceSelector": {"matchExpressions": [{"key": "ns", "operator": "In", "values": ["y", "z"]}]}}
    model = make_model(netpol("and", "x", pods_labelled(pod="a"), ingress=[{"from": [peer]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=["y/b", "z/b"])
    assert_reachability(model, expected)


def test_pod_and_namespace_selector_in_two_peers_are_ored():
    peers = [{"podSelector": pods_labelled(pod="b")}, {"namespaceSelector": pods_labelled(ns="y")}]
    model = make_model(netpol("or", "x", pods_labelled(pod="a"), ingress=[{"from": peers}]))
    expected = (Reachability(True).to("x/a", False).to("x/a", True, sources=["y/a", "y/b", "y/c", "x/b"]))
    assert_reachability(model, expected)


def test_pod_selector_with_empty_namespace_selector_spans_namespaces():
    peer = {"podSelector": pods_labelled(pod="c"), "namespaceSelector": {}}
    model = make_model(netpol("c-anywhere", "x", pods_labelled(pod="a"), ingress=[{"from": [peer]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=["x/c", "y/c", "z/c"])
    assert_reachability(model, expected)


def test_match_expressions_exists_and_does_not_exist():
    exists = {"matchExpressions": [{"key": "pod", "operator": "Exists"}]}
    missing = {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
    model = make_model(netpol("exists", "x", exists, ingress=[{"from": [{"podSelector": missing}]}]))
    expected = Reachability(True).to("x", False).to("x", True, sources=["x/a", "x/b", "x/c"])
    assert_reachability(model, expected)


def test_named_port_ingress_allows_only_that_port_and_protocol():
    model = make_model(netpol("named", "x", pods_labelled(pod="a"),
                              ingress=[{"ports": [{"port": "serve-80-tcp"}]}]))
    assert_reachability(model, Reachability(True), 80, "TCP")
    assert_reachability(model, Reachability(True).to("x/a", False), 81, "TCP")
    assert_reachability(model, Reachability(True).to("x/a", False), 80, "UDP")
    assert_reachability(model, Reachability(True), "serve-80-tcp", "TCP")


def test_named_port_of_other_protocol_matches_nothing():
    model = make_model(netpol("mismatch", "x", pods_labelled(pod="a"),
                              ingress=[{"ports": [{"protocol": "TCP", "port": "serve-80-udp"}]}]))
    for protocol in ("TCP", "UDP"):
        assert_reachability(model, Reachability(True).to("x/a", False), 80, protocol)


def test_numeric_port_and_protocol():
    model = make_model(netpol("udp81", "x", pods_labelled(pod="a"),
                              ingress=[{"ports": [{"port": 81, "protocol": "UDP"}]}]))
    assert_reachability(model, Reachability(True), 81, "UDP")
    for port, protocol in ((80, "UDP"), (81, "TCP"), (81, "SCTP")):
        assert_reachability(model, Reachability(True).to("x/a", False), port, protocol)


def test_sctp_only_policy_isolates_tcp():
    model = make_model(netpol("sctp", "x", {}, ingress=[{"ports": [{"protocol": "SCTP"}]}]))
    assert_reachability(model, Reachability(True), 80, "SCTP")
    assert_reachability(model, Reachability(True).to("x", False), 80, "TCP")


@pytest.mark.parametrize("port, end_port, open_ports", [(80, 81, {80, 81}), (81, 81, {81}), (79, 80, {80}), (82, 90, set())])
def test_end_port_range_is_inclusive(port, end_port, open_ports):
    model = make_model(netpol("range", "x", pods_labelled(pod="a"),
                              ingress=[{"ports": [{"port": port, "endPort": end_port}]}]))
    for probe_port in (80, 81):
        expected = Reachability(True) if probe_port in open_ports else Reachability(True).to("x/a", False)
        assert_reachability(model, expected, probe_port)


def test_egress_deny_all():
    model = make_model(netpol("deny-egress", "x", pods_labelled(pod="a"), types=["Egress"]))
    assert_reachability(model, Reachability(True).frm("x/a", False))


def test_egress_to_namespace_and_named_port_resolved_at_destination():
    model = make_model(netpol("to-y", "x", pods_labelled(pod="a"), types=["Egress"],
                              egress=[{"to": [{"namespaceSelector": pods_labelled(ns="y")}],
                                       "ports": [{"port": "serve-81-tcp"}]}]))
    assert_reachability(model, Reachability(True).frm("x/a", False), 80)
    assert_reachability(model, Reachability(True).frm("x/a", False).pair("x/a", "y/a", True)
                        .pair("x/a", "y/b", True).pair("x/a", "y/c", True), 81)


def test_allow_all_rule_unions_with_deny_all():
    model = make_model(netpol("deny", "x", {}, types=["Ingress"]),
                       netpol("allow-all", "x", {}, ingress=[{}]))
    assert_reachability(model, Reachability(True))


def test_multiple_policies_union():
    model = make_model(netpol("from-b", "x", pods_labelled(pod="a"), ingress=[{"from": [{"podSelector": pods_labelled(pod="b")}]}]),
                       netpol("from-y", "x", pods_labelled(pod="a"), ingress=[{"from": [{"namespaceSelector": pods_labelled(ns="y")}]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=["x/b", "y/a", "y/b", "y/c"])
    assert_reachability(model, expected)


def test_policy_in_another_namespace_does_not_apply():
    model = make_model(netpol("deny-a", "y", pods_labelled(pod="a"), types=["Ingress", "Egress"]))
    expected = Reachability(True).to("y/a", False).frm("y/a", False)
    assert_reachability(model, expected)


def test_ingress_and_egress_both_needed():
    model = make_model(
        netpol("a-egress-to-b", "x", pods_labelled(pod="a"), types=["Egress"], egress=[{"to": [{"podSelector": pods_labelled(pod="b")}]}]),
        netpol("b-ingress-from-c", "x", pods_labelled(pod="b"), ingress=[{"from": [{"podSelector": pods_labelled(pod="c")}]}]))
    expected = Reachability(True).frm("x/a", False).to("x/b", False).pair("x/c", "x/b", True)
    assert_reachability(model, expected)


def test_ip_block_egress_to_a_pod_ip():
    model = make_model(netpol("to-yb", "x", pods_labelled(pod="a"), types=["Egress"],
                              egress=[{"to": [{"ipBlock": {"cidr": pod_ip("y/b") + "/32"}}]}]))
    assert_reachability(model, Reachability(True).frm("x/a", False).pair("x/a", "y/b", True))


def test_ip_block_ingress_with_except():
    block = {"cidr": "10.0.0.0/8", "except": [pod_ip("z/c") + "/32", "10.2.0.0/16"]}
    model = make_model(netpol("cidr", "x", pods_labelled(pod="a"), ingress=[{"from": [{"ipBlock": block}]}]))
    expected = Reachability(True).to("x/a", False).to("x/a", True, sources=["x/b", "x/c", "z/a", "z/b"])
    assert_reachability(model, expected)


def test_except_narrows_only_its_own_peer():
    peers = [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.3.0.0/16"]}}, {"namespaceSelector": pods_labelled(ns="z")}]
    model = make_model(netpol("cidr", "x", pods_labelled(pod="a"), ingress=[{"from": peers}]))
    assert_reachability(model, Reachability(True))


def test_cidr_with_host_bits_means_its_network():
    model = make_model(netpol("hostbits", "x", pods_labelled(pod="a"), ingress=[{"from": [{"ipBlock": {"cidr": "10.2.0.77/16"}}]}]))
    assert_reachability(model, Reachability(True).to("x/a", False).to("x/a", True, sources=["y/a", "y/b", "y/c"]))


def test_update_replaces_the_policy_of_the_same_name():
    model = make_model(netpol("p", "x", pods_labelled(pod="a"), ingress=[{"from": [{"namespaceSelector": pods_labelled(ns="y")}]}]))
    model.set_policy(netpol("p", "x", pods_labelled(pod="a"), ingress=[{"from": [{"namespaceSelector": pods_labelled(ns="z")}]}]))
    assert_reachability(model, Reachability(True).to("x/a", False).to("x/a", True, sources=["z/a", "z/b", "z/c"]))


def test_delete_policy_restores_connectivity():
    model = make_model(netpol("deny", "x", {}))
    model.remove_policy("x/deny")
    assert_reachability(model, Reachability(True))


def test_namespace_relabel_changes_selection():
    from pytest_netarena.netpol import Namespace
    model = make_model(netpol("from-team", "x", pods_labelled(pod="a"),
                              ingress=[{"from": [{"namespaceSelector": pods_labelled(team="blue")}]}]))
    assert_reachability(model, Reachability(True).to("x/a", False))
    model.set_namespace(Namespace("z", {"ns": "z", "team": "blue"}))
    assert_reachability(model, Reachability(True).to("x/a", False).to("x/a", True, sources=["z/a", "z/b", "z/c"]))
