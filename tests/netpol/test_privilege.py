"""wider_than: flows one policy set admits beyond another, decided over all ports and peer kinds."""

from __future__ import annotations

from pytest_netarena.netpol import ContainerPort, Namespace, Pod, compile_policy
from pytest_netarena.netpol.privilege import wider_than

PODS = [Pod("app", "web", {"app": "web"}, "10.0.0.1", (ContainerPort(8080, "TCP", "http"),)),
        Pod("app", "db", {"app": "db"}, "10.0.0.2", (ContainerPort(5432, "TCP", "pg"),)),
        Pod("app", "job", {"app": "job"}, "10.0.0.3")]
SPACES = {"app": Namespace("app", {"team": "a"}), "other": Namespace("other")}


def policy(name="db", ingress=None, egress=None, selector=None):
    spec = {"podSelector": selector if selector is not None else {"matchLabels": {"app": name}}}
    types = []
    if ingress is not None:
        spec["ingress"], types = ingress, types + ["Ingress"]
    if egress is not None:
        spec["egress"], types = egress, types + ["Egress"]
    spec["policyTypes"] = types
    return compile_policy({"metadata": {"name": name, "namespace": "app"}, "spec": spec})


WEB = {"podSelector": {"matchLabels": {"app": "web"}}}
INTENT = [policy(ingress=[{"from": [WEB], "ports": [{"port": 5432}]}])]


def wider(actual, reference=INTENT, limit=10):
    return wider_than(PODS, SPACES, reference, actual, limit)


def test_the_same_or_an_equivalent_policy_is_not_wider():
    assert wider(INTENT) == []
    same = policy(ingress=[{"from": [{"podSelector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web"]}]}}], "ports": [{"port": "pg", "protocol": "TCP"}]}])
    assert wider([same]) == []


def test_narrower_is_not_wider():
    assert wider([policy(ingress=[])]) == []


def test_every_port_is_wider_and_the_interval_is_named():
    (found,) = wider([policy(ingress=[{"from": [WEB]}])])[:1]
    assert found.source == "app/web" and found.destination == "app/db"
    assert (found.low, found.high, found.protocol) == (1, 5431, "TCP")


def test_another_protocol_on_the_same_port_is_wider():
    found = wider([policy(ingress=[{"from": [WEB], "ports": [{"port": 5432}, {"port": 5432, "protocol": "UDP"}]}])])
    assert [(f.low, f.high, f.protocol) for f in found] == [(5432, 5432, "UDP")]


def test_deleting_the_policy_is_wider():
    assert wider([])


def test_empty_namespace_selector_admits_pods_the_cluster_does_not_hold():
    found = wider([policy(ingress=[{"from": [{"namespaceSelector": {}, **WEB}], "ports": [{"port": 5432}]}])])
    assert found and all("<any pod: app=web>" in f.source and not f.source.startswith("app/") for f in found)


def test_empty_pod_selector_admits_unlabelled_and_new_pods():
    found = wider([policy(ingress=[{"from": [{"podSelector": {}}], "ports": [{"port": 5432}]}])], limit=50)
    sources = {f.source for f in found}
    assert {"app/job", "app/<any pod: no labels>"} <= sources


def test_a_new_label_value_is_a_peer_of_its_own():
    exists = policy(ingress=[{"from": [{"podSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}}],
                              "ports": [{"port": 5432}]}])
    only_known = policy(ingress=[{"from": [{"podSelector": {"matchExpressions": [
        {"key": "app", "operator": "In", "values": ["web", "job", "db"]}]}}], "ports": [{"port": 5432}]}])
    assert wider([exists], [only_known])
    assert not wider([only_known], [exists])


def test_ip_blocks_outside_the_cluster():
    found = wider([policy(ingress=[{"from": [WEB, {"ipBlock": {"cidr": "192.168.0.0/16", "except": ["192.168.1.0/24"]}}],
                                    "ports": [{"port": 5432}]}])])
    assert found and "<outside 192.168." in found[0].source
    # an ipBlock holding only the web pod's address admits nothing new
    assert wider([policy(ingress=[{"from": [{"ipBlock": {"cidr": "10.0.0.1/32"}}], "ports": [{"port": 5432}]}])]) == []


def test_a_widening_the_other_direction_still_blocks_does_not_count():
    web_egress = policy("web", egress=[{"to": [{"podSelector": {"matchLabels": {"app": "db"}}}], "ports": [{"port": 5432}]}])
    reference = [*INTENT, web_egress]
    wide_ingress = policy(ingress=[{"from": [WEB]}])  # web may send only to 5432 anyway
    assert wider([wide_ingress, web_egress], reference) == []
    # opening db to every peer counts: job and pods of other namespaces send freely
    assert wider([policy(ingress=[{}]), web_egress], reference)


def test_egress_widening():
    closed = [policy("web", egress=[{"to": [{"podSelector": {"matchLabels": {"app": "db"}}}], "ports": [{"port": "pg"}]}])]
    assert wider(closed, closed) == []
    opened = [policy("web", egress=[{"to": [{"podSelector": {"matchLabels": {"app": "db"}}}]}])]
    found = wider(opened, closed)
    assert found and found[0].source == "app/web" and found[0].destination == "app/db"
    out = [policy("web", egress=[{"to": [{"ipBlock": {"cidr": "0.0.0.0/0"}}], "ports": [{"port": 5432}]}])]
    assert any(f.destination.startswith("<outside") for f in wider(out, closed))
