"""A second implementation checking the first: for random NetworkPolicy sets, what real packets reach through the
kernel's rules (compiled per policy rule, `cluster/firewall.py`) equals the engine's connectivity matrix
(`netpol/engine.py`, bitsets), for every pod pair, declared port and protocol, and a port nobody declares.

Each probe proves who answered (an HMAC only the destination's stand-in can make), so a flow counts as reached
only when the destination pod itself answered."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_netarena.netpol import Probe, cluster_from_objects

from .conftest import needs_live

pytestmark = needs_live

IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"  # no command: a stand-in serving its declared ports
PODS = {  # namespace/name: (labels, ports)
    "pa/p0": ({"app": "x", "tier": "front"}, [(8080, "TCP", "http"), (5353, "UDP", "dns")]),
    "pa/p1": ({"app": "y", "tier": "back"}, [(8080, "TCP", "http"), (9000, "TCP", "api")]),
    "pa/p2": ({"app": "z", "tier": "back"}, [(9000, "TCP", "http"), (5353, "UDP", None)]),
    "pb/q0": ({"app": "x", "tier": "front"}, [(8080, "TCP", "http"), (9000, "TCP", "api")]),
}
NAMESPACES = {"pa": {"team": "a"}, "pb": {"team": "b"}}
UNDECLARED = (7777, "TCP")


@pytest.fixture(scope="module")
def cluster(live):
    for name, labels in NAMESPACES.items():
        live.server.apply_object({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
    for key, (labels, ports) in PODS.items():
        namespace, name = key.split("/")
        declared = [{"containerPort": p, "protocol": proto, **({"name": n} if n else {})} for p, proto, n in ports]
        live.server.apply_object({"apiVersion": "v1", "kind": "Pod",
                                  "metadata": {"name": name, "namespace": namespace, "labels": labels},
                                  "spec": {"containers": [{"name": "main", "image": IMAGE, "ports": declared}]}})
    for namespace in NAMESPACES:
        live.ready(namespace)
    addresses = {key: live.server.get_object("Pod", *key.split("/"))["status"]["podIP"] for key in PODS}
    return live, addresses


labels_of = st.sampled_from([{"app": "x"}, {"app": "y"}, {"tier": "back"}, {"tier": "front"}, {}])
expressions = st.sampled_from([
    {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["x"]}]},
    {"matchExpressions": [{"key": "app", "operator": "Exists"}]}])
selectors = st.one_of(labels_of.map(lambda labels: {"matchLabels": labels} if labels else {}), expressions)
namespace_selectors = st.sampled_from([{}, {"matchLabels": {"team": "a"}}, {"matchLabels": {"team": "b"}},
                                       {"matchLabels": {"kubernetes.io/metadata.name": "pb"}}])
port_entries = st.one_of(
    st.builds(lambda port, proto: {"port": port, "protocol": proto},
              st.sampled_from([8080, 9000, 5353, 7777]), st.sampled_from(["TCP", "UDP"])),
    st.builds(lambda name, proto: {"port": name, "protocol": proto},
              st.sampled_from(["http", "api", "dns"]), st.sampled_from(["TCP", "UDP"])),
    st.just({"port": 8000, "endPort": 9000}),
    st.just({"protocol": "UDP"}))


@st.composite
def peers(draw, addresses):
    kind = draw(st.sampled_from(["pods", "namespaces", "both", "block"]))
    if kind == "pods":
        return {"podSelector": draw(selectors)}
    if kind == "namespaces":
        return {"namespaceSelector": draw(namespace_selectors)}
    if kind == "both":
        return {"namespaceSelector": draw(namespace_selectors), "podSelector": draw(selectors)}
    address = draw(st.sampled_from(sorted(addresses.values())))
    prefix = draw(st.sampled_from([32, 30, 24, 16]))
    block = {"cidr": str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))}
    if prefix < 32 and draw(st.booleans()):
        excluded = draw(st.sampled_from(sorted(addresses.values())))
        if ipaddress.ip_address(excluded) in ipaddress.ip_network(block["cidr"]):
            block["except"] = [f"{excluded}/32"]
    return {"ipBlock": block}


@st.composite
def rules(draw, addresses, direction):
    rule = {}
    if draw(st.booleans()):
        rule["from" if direction == "ingress" else "to"] = draw(st.lists(peers(addresses), min_size=1, max_size=2))
    if draw(st.booleans()):
        rule["ports"] = draw(st.lists(port_entries, min_size=1, max_size=2))
    return rule


@st.composite
def policy_sets(draw, addresses):
    policies = []
    for index in range(draw(st.integers(0, 4))):
        types = draw(st.sampled_from([["Ingress"], ["Egress"], ["Ingress", "Egress"]]))
        spec = {"podSelector": draw(selectors), "policyTypes": types}
        for direction in ("ingress", "egress"):
            if direction.capitalize() in types:
                spec[direction] = draw(st.lists(rules(addresses, direction), max_size=2))
        policies.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                         "metadata": {"name": f"np{index}", "namespace": draw(st.sampled_from(sorted(NAMESPACES)))},
                         "spec": spec})
    return policies


def flows(addresses):
    for source in PODS:
        for destination, (_, ports) in PODS.items():
            if destination != source:
                for port, protocol in {*((p, proto) for p, proto, _ in ports), UNDECLARED}:
                    yield source, destination, port, protocol


@pytest.fixture(scope="module")
def addresses(cluster):
    return cluster[1]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_packets_through_the_kernel_equal_the_engines_matrix(cluster, data):
    live, addresses = cluster
    policies = data.draw(policy_sets(addresses))
    server = live.server
    for namespace in NAMESPACES:
        for old in server.list_objects("NetworkPolicy", namespace):
            server.delete_object("NetworkPolicy", namespace, old["metadata"]["name"])
    server.apply_objects(policies)
    objects = [*server.list_objects("Namespace"), *server.list_objects("Pod"), *server.list_objects("NetworkPolicy")]
    model = cluster_from_objects(objects).model(listening_ports=True)
    wanted = list(flows(addresses))
    reached = live.cluster.probe_many([(s, addresses[d], port, proto) for s, d, port, proto in wanted], timeout=0.4)
    expected = {flow: model.allowed(Probe.to_pod(flow[0], flow[1], flow[2], flow[3])) for flow in wanted}
    actual = {flow: reach.pod == flow[1] for flow, reach in zip(wanted, reached)}
    wrong = {flow: (expected[flow], actual[flow]) for flow in wanted if expected[flow] != actual[flow]}
    assert not wrong, f"(engine, packets) differ for {wrong} under {policies}"
    assert all(reach.pod in (None, flow[1]) for flow, reach in zip(wanted, reached))  # no one else ever answers
