"""Hypothesis properties of the engine over random clusters and policies on the x/y/z model."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings, strategies as st

from pytest_netarena.netpol import EGRESS, INGRESS, ConnectivityModel, ContainerPort, Namespace, Pod, Probe

KEYS = ("pod", "tier", "ns", "team")
VALUES = ("a", "b", "c", "x", "y", "z", "web", "db", "red", "blue")
NAMESPACES = ("x", "y", "z")
PROBE_PORTS = ((80, "TCP"), (81, "UDP"), (81, "TCP"), ("http", "TCP"))
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

values = st.sampled_from(VALUES)
keys = st.sampled_from(KEYS)


@st.composite
def clusters(draw):
    namespaces = [Namespace(ns, {"ns": ns, **({"team": draw(st.sampled_from(["red", "blue"]))} if draw(st.booleans()) else {})})
                  for ns in NAMESPACES]
    pods = []
    for index, ns in enumerate(NAMESPACES):
        for number, name in enumerate("abc"):
            labels = {"pod": name}
            if draw(st.booleans()):
                labels["tier"] = draw(st.sampled_from(["web", "db"]))
            # The name "http" sits on 80 for some pods and on 81 for others: named ports resolve per pod.
            http = draw(st.sampled_from([80, 81]))
            ports = (ContainerPort(http, "TCP", "http"), ContainerPort(81 if http == 80 else 80, "TCP", "alt"),
                     ContainerPort(81, "UDP", "dns"))
            pods.append(Pod(ns, name, labels, f"10.{index}.0.{number + 1}", ports))
    return namespaces, pods


requirements = st.one_of(
    st.builds(lambda k, op, vs: {"key": k, "operator": op, "values": sorted(vs)}, keys, st.sampled_from(["In", "NotIn"]),
              st.sets(values, min_size=1, max_size=3)),
    st.builds(lambda k, op: {"key": k, "operator": op}, keys, st.sampled_from(["Exists", "DoesNotExist"])),
)
selectors = st.builds(
    lambda labels, expressions: {**({"matchLabels": labels} if labels else {}),
                                 **({"matchExpressions": expressions} if expressions else {})},
    st.dictionaries(keys, values, max_size=1), st.lists(requirements, max_size=2))
ip_blocks = st.sampled_from([
    {"cidr": "10.0.0.0/8"}, {"cidr": "10.1.0.0/16"}, {"cidr": "10.0.0.2/32"},
    {"cidr": "10.0.0.0/8", "except": ["10.2.0.0/16"]}, {"cidr": "10.1.0.0/16", "except": ["10.1.0.3/32"]}])
peers = st.one_of(
    st.builds(lambda s: {"podSelector": s}, selectors),
    st.builds(lambda s: {"namespaceSelector": s}, selectors),
    st.builds(lambda p, n: {"podSelector": p, "namespaceSelector": n}, selectors, selectors),
    st.builds(lambda b: {"ipBlock": b}, ip_blocks))
port_entries = st.one_of(
    st.builds(lambda proto: {"protocol": proto}, st.sampled_from(["TCP", "UDP"])),
    st.builds(lambda p: {"port": p}, st.sampled_from([80, 81, "http", "dns", "alt"])),
    st.builds(lambda p, proto: {"port": p, "protocol": proto}, st.sampled_from([80, 81, "dns"]), st.sampled_from(["TCP", "UDP"])),
    st.just({"port": 80, "endPort": 81}))


def rules(peer_field):
    return st.builds(
        lambda ps, ports: {**({peer_field: ps} if ps is not None else {}), **({"ports": ports} if ports is not None else {})},
        st.none() | st.lists(peers, max_size=2), st.none() | st.lists(port_entries, max_size=2))


@st.composite
def policies(draw, name):
    types = draw(st.sampled_from([["Ingress"], ["Egress"], ["Ingress", "Egress"]]))
    spec = {"podSelector": draw(selectors), "policyTypes": types}
    if "Ingress" in types:
        spec["ingress"] = draw(st.lists(rules("from"), max_size=2))
    if "Egress" in types:
        spec["egress"] = draw(st.lists(rules("to"), max_size=2))
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": name, "namespace": draw(st.sampled_from(NAMESPACES))}, "spec": spec}


@st.composite
def scenarios(draw):
    namespaces, pods = draw(clusters())
    count = draw(st.integers(0, 4))
    return namespaces, pods, [draw(policies(f"p{i}")) for i in range(count)]


def all_probes(pods):
    return [Probe(s.key, d.key, port, proto) for s in pods for d in pods for port, proto in PROBE_PORTS]


def allowed_set(model, probes):
    return {probe for probe, ok in model.matrix(probes).items() if ok}


@SETTINGS
@given(scenarios(), st.data())
def test_adding_a_rule_never_removes_a_connection(scenario, data):
    namespaces, pods, policy_list = scenario
    probes = all_probes(pods)
    before = allowed_set(ConnectivityModel(namespaces, pods, policy_list), probes)
    grown = copy.deepcopy(policy_list)
    if grown and data.draw(st.booleans(), label="extend existing policy"):
        policy = grown[data.draw(st.integers(0, len(grown) - 1), label="policy")]
        direction = data.draw(st.sampled_from(policy["spec"]["policyTypes"]), label="direction")
        field, peer_field = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        policy["spec"].setdefault(field, []).append(data.draw(rules(peer_field), label="rule"))
    elif grown:
        # A new policy selecting exactly the pods an existing one isolates, in a direction it isolates.
        template = grown[data.draw(st.integers(0, len(grown) - 1), label="template")]
        direction = data.draw(st.sampled_from(template["spec"]["policyTypes"]), label="direction")
        field, peer_field = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
        grown.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": {"name": "added", "namespace": template["metadata"]["namespace"]},
                      "spec": {"podSelector": template["spec"]["podSelector"], "policyTypes": [direction],
                               field: data.draw(st.lists(rules(peer_field), max_size=2), label="rules")}})
    after = allowed_set(ConnectivityModel(namespaces, pods, grown), probes)
    assert before <= after


RENAMED_KEYS = {"pod": "app", "tier": "layer", "ns": "project", "team": "squad"}


def rename_labels(labels):
    return {RENAMED_KEYS[k]: f"{v}-r" for k, v in labels.items() if k in RENAMED_KEYS} | {
        k: v for k, v in labels.items() if k not in RENAMED_KEYS}


def rename_selector(selector):
    renamed = {}
    if "matchLabels" in selector:
        renamed["matchLabels"] = rename_labels(selector["matchLabels"])
    if "matchExpressions" in selector:
        renamed["matchExpressions"] = [
            {**e, "key": RENAMED_KEYS[e["key"]], **({"values": [f"{v}-r" for v in e["values"]]} if "values" in e else {})}
            for e in selector["matchExpressions"]]
    return renamed


def rename_policy(policy):
    renamed = copy.deepcopy(policy)
    spec = renamed["spec"]
    spec["podSelector"] = rename_selector(spec["podSelector"])
    for field, peer_field in (("ingress", "from"), ("egress", "to")):
        for rule in spec.get(field, []):
            for peer in rule.get(peer_field) or []:
                for selector_field in ("podSelector", "namespaceSelector"):
                    if selector_field in peer:
                        peer[selector_field] = rename_selector(peer[selector_field])
    return renamed


@SETTINGS
@given(scenarios())
def test_consistent_label_renames_keep_every_verdict(scenario):
    namespaces, pods, policy_list = scenario
    probes = all_probes(pods)
    original = ConnectivityModel(namespaces, pods, policy_list).matrix(probes)
    renamed_model = ConnectivityModel(
        [Namespace(ns.name, rename_labels({k: v for k, v in ns.labels.items() if k != "kubernetes.io/metadata.name"}))
         for ns in namespaces],
        [Pod(p.namespace, p.name, rename_labels(p.labels), p.ip, p.ports) for p in pods],
        [rename_policy(p) for p in policy_list])
    assert renamed_model.matrix(probes) == original


@SETTINGS
@given(scenarios())
def test_non_isolated_destination_is_reachable_from_every_non_egress_isolated_source(scenario):
    namespaces, pods, policy_list = scenario
    model = ConnectivityModel(namespaces, pods, policy_list)
    open_destinations = [p for p in pods if not model.selecting_policies(p.key, INGRESS)]
    free_sources = [p for p in pods if not model.selecting_policies(p.key, EGRESS)]
    for source in free_sources:
        for destination in open_destinations:
            for port, protocol in PROBE_PORTS:
                assert model.allowed(Probe(source.key, destination.key, port, protocol))


@SETTINGS
@given(scenarios())
def test_fast_path_agrees_with_rule_by_rule_explanation(scenario):
    namespaces, pods, policy_list = scenario
    model = ConnectivityModel(namespaces, pods, policy_list)
    for probe, verdict in model.matrix(all_probes(pods)).items():
        assert model.explain(probe).allowed == verdict, str(model.explain(probe))


@SETTINGS
@given(scenarios(), st.lists(st.tuples(st.booleans(), st.integers(0, 5)), min_size=1, max_size=5), st.data())
def test_incremental_view_matches_a_fresh_model(scenario, operations, data):
    namespaces, pods, policy_list = scenario
    probes = all_probes(pods)
    model = ConnectivityModel(namespaces, pods, policy_list)
    view = model.watch(probes)
    current = {f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in policy_list}
    for remove, slot in operations:
        if remove and current:
            key = sorted(current)[slot % len(current)]
            model.remove_policy(key)
            del current[key]
        else:
            policy = data.draw(policies(f"p{slot}"), label="policy")
            compiled = model.set_policy(policy)
            current = {k: v for k, v in current.items() if k != compiled.key} | {compiled.key: policy}
        before = dict(view.results)
        changed = view.refresh()
        expected = ConnectivityModel(namespaces, pods, list(current.values())).matrix(probes)
        assert view.results == expected
        assert changed == {p: v for p, v in expected.items() if before[p] != v}
