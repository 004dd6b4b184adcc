"""The corner cases of netpol-semantics.md: defaulting, empty vs missing, selectors, named ports, services."""

from __future__ import annotations

from pytest_netarena.netpol import (INGRESS, EGRESS, ConnectivityModel, ContainerPort, Namespace, Pod, Probe, Service,
                                    ServicePort, compile_policy)

from .netpol_xyz import Reachability, assert_reachability, make_model, netpol, pods_labelled


def test_egress_only_policy_without_types_also_isolates_ingress():
    policy = compile_policy(netpol("e", "x", pods_labelled(pod="a"), egress=[{}]))
    assert policy.ingress == () and policy.egress is not None
    assert_reachability(make_model(netpol("e", "x", pods_labelled(pod="a"), egress=[{}])), Reachability(True).to("x/a", False))


def test_empty_egress_list_without_types_does_not_isolate_egress():
    policy = compile_policy(netpol("e", "x", {}, egress=[]))
    assert policy.egress is None
    assert_reachability(make_model(netpol("e", "x", {}, egress=[])), Reachability(True).to("x", False))


def test_ingress_rules_ignored_when_types_only_egress():
    model = make_model(netpol("e", "x", pods_labelled(pod="a"), ingress=[{"from": [{"podSelector": pods_labelled(pod="zzz")}]}],
                              types=["Egress"], egress=[{}]))
    assert_reachability(model, Reachability(True))


def test_empty_from_and_empty_ports_mean_everything():
    for rule in ({"from": []}, {"ports": []}, {"from": [], "ports": []}, {}):
        assert_reachability(make_model(netpol("p", "x", {}, ingress=[rule])), Reachability(True))


def test_missing_spec_pod_selector_selects_all_pods_of_namespace():
    policy = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "p", "namespace": "y"},
              "spec": {"policyTypes": ["Ingress"]}}
    assert_reachability(make_model(policy), Reachability(True).to("y", False))


def test_match_labels_null_is_empty():
    assert_reachability(make_model(netpol("p", "z", {"matchLabels": None})), Reachability(True).to("z", False))


def test_several_match_labels_keys_are_all_required():
    pods = [Pod("x", "web", {"app": "web", "tier": "front"}), Pod("x", "web2", {"app": "web"}), Pod("x", "t", {"app": "t"})]
    model = ConnectivityModel([Namespace("x")], pods, [netpol("p", "x", pods_labelled(app="t"), ingress=[
        {"from": [{"podSelector": {"matchLabels": {"app": "web", "tier": "front"}}}]}])])
    assert model.allowed(Probe("x/web", "x/t", 80))
    assert not model.allowed(Probe("x/web2", "x/t", 80))


def test_not_in_matches_pods_without_the_key():
    pods = [Pod("x", "plain", {}), Pod("x", "blue", {"color": "blue"}), Pod("x", "red", {"color": "red"}), Pod("x", "t", {"app": "t"})]
    selector = {"matchExpressions": [{"key": "color", "operator": "NotIn", "values": ["red"]}]}
    model = ConnectivityModel([], pods, [netpol("p", "x", pods_labelled(app="t"), ingress=[{"from": [{"podSelector": selector}]}])])
    verdicts = {name: model.allowed(Probe(f"x/{name}", "x/t", 80)) for name in ("plain", "blue", "red")}
    assert verdicts == {"plain": True, "blue": True, "red": False}


def test_undeclared_namespace_still_has_its_name_label():
    model = ConnectivityModel([], [Pod("ghost", "p"), Pod("x", "t", {"app": "t"})], [
        netpol("p", "x", pods_labelled(app="t"), ingress=[{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ghost"}}}]}])])
    assert model.allowed(Probe("ghost/p", "x/t", 80))


def test_named_port_in_egress_resolves_per_destination_pod():
    http = lambda number: (ContainerPort(number, "TCP", "http"),)
    pods = [Pod("x", "client", {"app": "client"}), Pod("x", "s8080", {}, ports=http(8080)), Pod("x", "s9090", {}, ports=http(9090)),
            Pod("x", "plain", {})]
    model = ConnectivityModel([], pods, [netpol("p", "x", pods_labelled(app="client"), types=["Egress"], egress=[{"ports": [{"port": "http"}]}])])
    assert model.allowed(Probe("x/client", "x/s8080", 8080))
    assert not model.allowed(Probe("x/client", "x/s8080", 9090))
    assert model.allowed(Probe("x/client", "x/s9090", 9090))
    assert model.allowed(Probe("x/client", "x/s9090", "http"))
    assert not model.allowed(Probe("x/client", "x/plain", 8080))


def test_unresolvable_named_probe_port_denies_with_a_reason():
    model = make_model()
    probe = Probe("x/a", "y/b", "no-such-port")
    assert not model.allowed(probe)
    explanation = model.explain(probe)
    assert not explanation.allowed and "no container port named 'no-such-port'" in str(explanation)


def test_loopback_is_evaluated_like_other_traffic():
    model = make_model(netpol("deny", "x", pods_labelled(pod="a")))
    assert not model.allowed(Probe("x/a", "x/a", 80))


def test_pod_without_ip_never_matches_ip_block():
    pods = [Pod("x", "noip", {}), Pod("x", "t", {"app": "t"})]
    model = ConnectivityModel([], pods, [netpol("p", "x", pods_labelled(app="t"), ingress=[{"from": [{"ipBlock": {"cidr": "0.0.0.0/0"}}]}])])
    assert not model.allowed(Probe("x/noip", "x/t", 80))


def test_ipv6_block():
    pods = [Pod("x", "v6", {}, "fd00::5"), Pod("x", "v4", {}, "10.0.0.5"), Pod("x", "t", {"app": "t"})]
    model = ConnectivityModel([], pods, [netpol("p", "x", pods_labelled(app="t"), ingress=[{"from": [{"ipBlock": {"cidr": "fd00::/64"}}]}])])
    assert model.allowed(Probe("x/v6", "x/t", 80)) and not model.allowed(Probe("x/v4", "x/t", 80))


def _shop() -> ConnectivityModel:
    pods = [Pod("shop", "frontend", {"app": "frontend"}, "10.0.0.1", (ContainerPort(8080, "TCP", "http"),)),
            Pod("shop", "email", {"app": "email"}, "10.0.0.2", (ContainerPort(8080, "TCP", "http"),)),
            Pod("shop", "client", {"app": "client"}, "10.0.0.3")]
    services = [Service("shop", "frontend", {"app": "frontend"}, (ServicePort(80, 8080, name="web"),)),
                Service("shop", "email", {"app": "email"}, (ServicePort(5000, "http"),)),
                Service("shop", "nobody", {"app": "nobody"}, (ServicePort(1,),)),
                Service("shop", "headless", {}, (ServicePort(1,),))]
    policy = netpol("email", "shop", pods_labelled(app="email"), ingress=[{"from": [{"podSelector": pods_labelled(app="frontend")}],
                                                                          "ports": [{"port": 8080}]}])
    return ConnectivityModel([Namespace("shop")], pods, [policy], services)


def test_service_probe_uses_target_port_number_and_name():
    model = _shop()
    assert model.allowed(Probe.to_svc("shop/client", "shop/frontend", 80))
    assert model.allowed(Probe.to_svc("shop/client", "shop/frontend", "web"))
    assert not model.allowed(Probe.to_svc("shop/client", "shop/frontend", 8080))  # not a service port
    assert model.allowed(Probe.to_svc("shop/frontend", "shop/email", 5000))
    assert not model.allowed(Probe.to_svc("shop/client", "shop/email", 5000))
    assert not model.allowed(Probe.to_svc("shop/client", "shop/frontend", 80, "UDP"))


def test_service_without_backends_denies_and_says_why():
    model = _shop()
    for service in ("shop/nobody", "shop/headless"):
        explanation = model.explain(Probe.to_svc("shop/client", service, 1))
        assert not explanation.allowed and "selects no pods" in explanation.note


def test_service_allowed_if_any_backend_accepts():
    model = _shop()
    model.set_pod(Pod("shop", "email-2", {"app": "email", "open": "yes"}, "10.0.0.9", (ContainerPort(8080, "TCP", "http"),)))
    model.set_policy(netpol("email", "shop", {"matchExpressions": [{"key": "open", "operator": "DoesNotExist"}, {"key": "app", "operator": "In", "values": ["email"]}]},
                            ingress=[{"from": [{"podSelector": pods_labelled(app="frontend")}]}]))
    explanation = model.explain(Probe.to_svc("shop/client", "shop/email", 5000))
    assert explanation.allowed and [f.allowed for f in explanation.flows] == [False, True]


def test_explanation_names_policies_and_rules():
    model = make_model(
        netpol("deny", "x", {}, types=["Ingress"]),
        netpol("from-y", "x", pods_labelled(pod="a"), ingress=[{"ports": [{"port": 81}]},
                                                         {"from": [{"podSelector": pods_labelled(pod="q")}, {"namespaceSelector": pods_labelled(ns="y")}]}]),
        netpol("egress-all", "y", {}, egress=[{}]))
    explanation = model.explain(Probe("y/b", "x/a", 80))
    assert explanation.allowed
    (flow,) = explanation.flows
    assert flow.ingress.policies == ("x/deny", "x/from-y")
    assert [(m.policy, m.direction, m.rule, m.peer) for m in flow.ingress.allowed_by] == [("x/from-y", INGRESS, 1, 1)]
    assert [(m.policy, m.rule, m.peer) for m in flow.egress.allowed_by] == [("y/egress-all", 0, None)]
    denied = model.explain(Probe("z/b", "x/b", 80)).flows[0]
    assert not denied.allowed and not denied.egress.isolated and denied.ingress.allowed_by == ()
    assert "denied, no rule matches (selected by x/deny)" in str(denied)
    assert "not isolated" in str(model.explain(Probe("x/a", "z/c", 80)))
    assert model.selecting_policies("x/a", INGRESS) == ("x/deny", "x/from-y")
    assert model.selecting_policies("y/a", EGRESS) == ("y/egress-all",)


def test_watch_refresh_reports_only_changes():
    model = make_model()
    probes = [Probe(s, d, 80) for s in ("x/a", "y/a") for d in ("x/b", "y/b")]
    view = model.watch(probes)
    assert all(view.results.values())
    model.set_policy(netpol("deny", "y", pods_labelled(pod="b")))
    assert view.refresh() == {Probe("x/a", "y/b", 80): False, Probe("y/a", "y/b", 80): False}
    assert view.refresh() == {}
    model.set_pod(Pod("y", "b", {"pod": "renamed"}, "10.2.0.2"))
    assert view.refresh() == {Probe("x/a", "y/b", 80): True, Probe("y/a", "y/b", 80): True}


def test_invalid_update_leaves_the_model_unchanged():
    import pytest
    from pytest_netarena.netpol import PolicyValidationError
    model = make_model(netpol("deny", "x", {}))
    with pytest.raises(PolicyValidationError):
        model.set_policy(netpol("deny", "x", {}, ingress=[{"ports": [{"port": -1}]}]))
    assert_reachability(model, Reachability(True).to("x", False))


def test_manifest_objects_build_a_model():
    from pytest_netarena.netpol import cluster_from_objects, parse_probes
    objects = [{"kind": "Pod", "metadata": {"name": "a", "namespace": "x", "labels": {"pod": "a"}}},
               {"kind": "Pod", "metadata": {"name": "b", "namespace": "x"}},
               {"kind": "ConfigMap", "metadata": {"name": "ignored"}},
               netpol("deny-a", "x", {"matchLabels": {"pod": "a"}})]
    model = cluster_from_objects(objects).model()
    probes = parse_probes([{"from": "x/b", "to": "x/a", "port": "80"}, {"from": "x/a", "to": "x/b", "port": 80}])
    assert probes[0].port == 80
    assert list(model.matrix(probes).values()) == [False, True]
