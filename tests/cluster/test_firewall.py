"""The node's iptables rules as text, without a cluster: what one policy rule writes, and the Service ports kube-proxy
would read from EndpointSlices (the live tests send real packets through the same rules)."""

from __future__ import annotations

import re

from pytest_netarena.cluster import firewall
from pytest_netarena.netpol import Namespace, compile_policy
from pytest_netarena.netpol.manifests import pod_from_manifest

EGRESS_ADMIT = "-j MARK --set-xmark 0x10000/0x10000"
INGRESS_ADMIT = "-j MARK --set-xmark 0x20000/0x20000"


def _pod(name: str, address: str, http: int, app: str):
    return pod_from_manifest({"metadata": {"name": name, "namespace": "pa", "labels": {"app": app}, "uid": name},
                              "spec": {"containers": [{"name": "m", "ports": [{"name": "http", "containerPort": http}]}]},
                              "status": {"podIP": address}})


def _policy_lines(spec: dict) -> list[str]:
    """The policy chains' lines for three pods whose port `http` is a different number on each."""
    view = firewall.ClusterView(namespaces={"pa": Namespace("pa", {})})
    view.pods = [_pod("p0", "10.244.0.2", 8080, "a"), _pod("p1", "10.244.0.3", 9090, "b"),
                 _pod("p2", "10.244.1.4", 7070, "c")]
    view.veths = {p.key: f"veth-{p.name}" for p in view.pods}
    view.policies = [compile_policy({"kind": "NetworkPolicy", "metadata": {"name": "np", "namespace": "pa"},
                                     "spec": {"podSelector": {"matchLabels": {"app": "a"}}, **spec}})]
    text = re.sub(r"NP-([EIB])-[0-9A-F]{16}", r"NP-\1", firewall.filter_table(view))
    return [line for line in text.splitlines() if line.startswith("-A NP-")]


def test_a_named_port_resolves_on_each_destination_pod_and_to_nothing_elsewhere():
    lines = _policy_lines({"policyTypes": ["Egress"], "egress": [
        {"to": [{"ipBlock": {"cidr": "10.244.0.0/16", "except": ["10.244.0.3/32"]}}], "ports": [{"port": "http"}]},
        {"ports": [{"port": "http"}]}]})
    assert lines == [
        # the block: its except returns first, then each pod inside it on its own number for `http`
        "-A NP-E -d 10.244.0.0/16 -j NP-B",
        "-A NP-B -d 10.244.0.3/32 -j RETURN",
        f"-A NP-B -d 10.244.0.2/32 -p tcp -m tcp --dport 8080 {EGRESS_ADMIT}",
        f"-A NP-B -d 10.244.1.4/32 -p tcp -m tcp --dport 7070 {EGRESS_ADMIT}",
        # anywhere on a named port: only pods have port names, so one line per pod and none for other addresses
        f"-A NP-E -d 10.244.0.2/32 -p tcp -m tcp --dport 8080 {EGRESS_ADMIT}",
        f"-A NP-E -d 10.244.0.3/32 -p tcp -m tcp --dport 9090 {EGRESS_ADMIT}",
        f"-A NP-E -d 10.244.1.4/32 -p tcp -m tcp --dport 7070 {EGRESS_ADMIT}",
    ]


def test_ingress_ports_are_the_selected_pods_own_whoever_sends():
    lines = _policy_lines({"policyTypes": ["Ingress"], "ingress": [
        {"ports": [{"port": "http"}, {"port": 5353, "protocol": "UDP"}]},
        {"from": [{"podSelector": {"matchLabels": {"app": "c"}}}, {"ipBlock": {"cidr": "192.0.2.0/24"}}],
         "ports": [{"port": "http"}]},
        {"from": [{"podSelector": {"matchLabels": {"app": "b"}}}]}]})
    assert lines == [
        f"-A NP-I -p tcp -m tcp --dport 8080 {INGRESS_ADMIT}",
        f"-A NP-I -p udp -m udp --dport 5353 {INGRESS_ADMIT}",
        f"-A NP-I -s 10.244.1.4/32 -p tcp -m tcp --dport 8080 {INGRESS_ADMIT}",
        "-A NP-I -s 192.0.2.0/24 -j NP-B",
        f"-A NP-B -p tcp -m tcp --dport 8080 {INGRESS_ADMIT}",
        f"-A NP-I -s 10.244.0.3/32 {INGRESS_ADMIT}",  # no ports: every port
    ]


def _service(name: str, cluster_ip: str, ports: list[dict], kind: str = "ClusterIP") -> dict:
    return {"metadata": {"namespace": "shop", "name": name}, "spec": {"clusterIP": cluster_ip, "type": kind, "ports": ports}}


def _slice(service: str, ports: list[dict], ready: list, namespace: str = "shop") -> dict:
    return {"metadata": {"namespace": namespace, "labels": {"kubernetes.io/service-name": service} if service else {}},
            "ports": ports, "endpoints": [{"addresses": [f"10.244.0.{i + 2}"], "conditions": {"ready": state}}
                                          for i, state in enumerate(ready)]}


def test_a_pod_isolated_both_ways_by_ip_blocks_gets_one_block_chain_per_direction():
    # found by tests/cluster/test_property.py: both rules are #0 of one policy for the same pod, and their shared
    # chain marked a packet sent to a peer of the egress block as admitted by ingress as well
    view = firewall.ClusterView(namespaces={"pa": Namespace("pa", {})})
    view.pods = [_pod("p0", "10.244.0.2", 8080, "a"), _pod("p1", "10.244.0.3", 9090, "b")]
    view.veths = {p.key: f"veth-{p.name}" for p in view.pods}
    view.policies = [compile_policy({"kind": "NetworkPolicy", "metadata": {"name": "np", "namespace": "pa"},
                                     "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"],
                                              "ingress": [{"from": [{"ipBlock": {"cidr": "10.244.0.2/32"}}]}],
                                              "egress": [{"to": [{"ipBlock": {"cidr": "10.244.0.3/32"}}]}]}})]
    text = firewall.filter_table(view)
    declared = re.findall(r"^:(NP-B-[0-9A-F]{16}) ", text, re.M)
    assert len(declared) == 4 and len(set(declared)) == 4  # two pods, two directions
    for chain in declared:
        marks = set(re.findall(rf"^-A {chain} .*--set-xmark (0x[0-9a-f]+)/", text, re.M))
        assert len(marks) == 1, (chain, marks)  # each block chain admits in its own direction only


def test_service_ports_take_the_ready_endpoints_of_the_port_of_the_same_name_and_protocol():
    web = [{"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]
    services = [_service("web", "10.96.0.10", web), _service("headless", "None", web),
                _service("ext", "10.96.0.11", web, kind="ExternalName")]
    slices = [_slice("web", [{"name": "http", "port": 8080}, {"name": "dns", "port": 5353, "protocol": "UDP"},
                             {"name": "dns", "port": 5454, "protocol": "TCP"}], [True, False, None]),
              _slice("web", [{"name": "http", "port": 9090}], [True]),
              _slice("web", [{"name": "http", "port": 7070}], [True], namespace="other"),
              _slice("", [{"name": "http", "port": 6060}], [True])]
    ports = firewall.service_ports(services, slices)
    assert [(p.key, str(p.cluster_ip), p.port, tuple((str(a), n) for a, n in p.endpoints)) for p in ports] == [
        ("shop/web:80/TCP", "10.96.0.10", 80, (("10.244.0.2", 8080), ("10.244.0.2", 9090), ("10.244.0.4", 8080))),
        ("shop/web:53/UDP", "10.96.0.10", 53, (("10.244.0.2", 5353), ("10.244.0.4", 5353))),
    ]


def test_values_that_do_not_parse_are_left_out_and_never_written():
    injected = "-I FORWARD 1 -j ACCEPT"
    view = firewall.ClusterView(namespaces={"pa": Namespace("pa", {})})
    view.pods = [_pod("p0", "10.244.0.2", 8080, "a"), _pod("p1", f"10.244.0.3/32 -j DROP\n{injected}\n#", 9090, "b"),
                 _pod("p2", "10.244.0.4", 7070, "c"), _pod("p3", "fd00::4", 7070, "c")]
    view.veths = {"pa/p0": "veth-p0", "pa/p1": "veth-p1", "pa/p2": f"v2 -j ACCEPT\n{injected}", "pa/p3": "veth-p3"}
    view.policies = [compile_policy({"kind": "NetworkPolicy", "metadata": {"name": "np", "namespace": "pa"},
                                     "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [
                                         {"from": [{"ipBlock": {"cidr": "fd00::/64"}}, {"podSelector": {}}]}]}})]
    view.services = firewall.service_ports(
        [_service("web", "10.96.0.10", [{"name": "http", "port": 80}]),
         _service("evil", f"10.96.0.11\n{injected}", [{"name": "http", "port": 80}]),
         _service("odd", "10.96.0.12", [{"name": "http", "port": "80 -j ACCEPT"},
                                        {"name": "dns", "port": 53, "protocol": f"UDP\n{injected}"}])],
        [{"metadata": {"namespace": "shop", "labels": {"kubernetes.io/service-name": "web"}},
          "ports": [{"name": "http", "port": 8080}, {"name": "http", "port": f"8080\n{injected}"}],
          "endpoints": [{"addresses": ["10.244.0.2", f"10.244.0.5\nCOMMIT\n*filter\n{injected}"]}]}])
    text = firewall.ruleset(view)
    assert injected not in text and "fd00" not in text and "10.244.0.3" not in text and "10.244.0.5" not in text
    assert "-A FORWARD -i veth-p0 ! -s 10.244.0.2/32 -j DROP" in text
    assert "veth-p1" not in text and "veth-p3" not in text and "v2" not in text  # left out: no address, no name
    assert [(str(p.cluster_ip), p.port, [(str(a), n) for a, n in p.endpoints]) for p in view.services] == [
        ("10.96.0.10", 80, [("10.244.0.2", 8080)])]
