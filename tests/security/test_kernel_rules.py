"""Red team: values a client writes through the API that the node writes into root iptables rules (a pod's status
address, a Service's ClusterIP, an EndpointSlice's addresses, ports and protocols).

Each is refused as a real API server refuses it (422, its words), through the real kubectl; and the same values
put straight into the store (as if the API had let one pass) never reach a rule as text: the node keeps enforcing
the policy that isolates a server pod, checked with real packets."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

from pytest_netarena.cluster import live_support

from .pods import PodCluster, pod

pytestmark = pytest.mark.skipif(not live_support().ok, reason=f"pods cannot run here: {live_support().reason}")

INJECTED = "-I FORWARD 1 -j ACCEPT"
HTTP = [{"name": "http", "containerPort": 8080}]


DENY_WEB = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": {"name": "deny-web", "namespace": "default"},
            "spec": {"podSelector": {"matchLabels": {"app": "web"}}, "policyTypes": ["Ingress"]}}


class Cluster(PodCluster):
    def __init__(self, tmp) -> None:
        super().__init__(tmp)
        self.run(pod("web", "mkdir -p /w && echo ok > /w/index.html && exec httpd -f -p 8080 -h /w", ports=HTTP),
                 pod("client", "exec sleep 3600", ports=HTTP), DENY_WEB)

    def client_reaches_web(self, address: str) -> bool:
        done = self.kubectl("exec", "client", "--", "wget", "-qO-", "-T", "2", f"http://{address}:8080/")
        return done.returncode == 0 and "ok" in done.stdout

    def node_rules(self) -> str:
        assert self.live.settle(10)
        done = self.live.network.node.call(lambda: subprocess.run(["iptables-save"], capture_output=True, text=True,
                                                                  timeout=30))
        return done.stdout


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = Cluster(tmp_path_factory.mktemp("kubectl"))
    yield made
    made.stop()


def _forward_rules(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("-A FORWARD")]


def test_a_pod_address_holding_rules_is_refused_and_the_policy_holds(cluster):
    web = cluster.address("web")
    assert not cluster.client_reaches_web(web)  # deny-web isolates it
    hostile = f"{cluster.address('client')}/32 -j DROP\n{INJECTED}\n#"
    for patch in ({"status": {"podIP": hostile}}, {"status": {"podIP": hostile, "podIPs": [{"ip": hostile}]}},
                  {"status": {"podIP": "10.244.9.9 "}}):
        done = cluster.kubectl("patch", "pod", "client", "--subresource=status", "--type=merge", "-p", json.dumps(patch))
        assert done.returncode != 0, done.stdout  # the attack: 200 on the old server
        assert "is invalid: status.podIPs[0]: Invalid value" in done.stderr, done.stderr
        assert "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)" in done.stderr
    # podIPs alone: podIP wins (v1's conversion), so nothing changes
    done = cluster.kubectl("patch", "pod", "client", "--subresource=status", "--type=merge", "-p",
                           json.dumps({"status": {"podIPs": [{"ip": hostile}]}}))
    assert done.returncode == 0 and "no change" in done.stdout, done.stdout + done.stderr
    forward = _forward_rules(cluster.node_rules())
    assert forward.count("-A FORWARD -j ACCEPT") == 1 and forward[-1] == "-A FORWARD -j ACCEPT", forward[:3]
    assert not cluster.client_reaches_web(web)


def test_service_and_endpoint_values_holding_rules_are_refused(cluster):
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "evil", "namespace": "default"},
               "spec": {"clusterIP": f"10.96.7.7/32 -j ACCEPT\n{INJECTED}\n#", "ports": [{"port": 80}]}}
    done = subprocess.run([cluster.kubectl_bin, "create", "-f", "-"], input=json.dumps(service), env=cluster.env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "spec.clusterIPs[0]: Invalid value" in done.stderr, done.stderr
    outside = copy.deepcopy(service)
    outside["spec"]["clusterIP"] = "192.0.2.7"
    done = subprocess.run([cluster.kubectl_bin, "create", "-f", "-"], input=json.dumps(outside), env=cluster.env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "is not in the valid range. The range of valid IPs is 10.96.0.0/12" in done.stderr
    endpoints = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                 "metadata": {"name": "evil", "namespace": "default", "labels": {"kubernetes.io/service-name": "web"}},
                 "addressType": "IPv4",
                 "endpoints": [{"addresses": [f"{cluster.address('web')}\nCOMMIT\n*filter\n{INJECTED}\nCOMMIT"]}],
                 "ports": [{"name": "", "port": 8080, "protocol": "TCP\n-A FORWARD -j ACCEPT"}]}
    done = subprocess.run([cluster.kubectl_bin, "create", "-f", "-"], input=json.dumps(endpoints), env=cluster.env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0, done.stdout
    assert "endpoints[0].addresses[0]: Invalid value" in done.stderr and "must be a valid IPv4 address" in done.stderr
    assert 'ports[0].protocol: Unsupported value' in done.stderr, done.stderr
    assert INJECTED not in cluster.node_rules()


def test_values_that_got_past_the_api_are_parsed_never_written_as_text(cluster):
    # as if the API had a gap: the hostile values put straight into the store, where the data plane reads them
    store = cluster.server.store
    web = cluster.address("web")
    before = _forward_rules(cluster.node_rules())
    original = store.get("pods", "default", "client")
    try:
        _put_hostile_values(store, web, cluster.address("client"))
        rules = cluster.node_rules()
        assert cluster.live.dataplane.errors == []  # every rule set still applies
        assert INJECTED not in rules and "evil" not in rules
        assert _forward_rules(rules) == before  # the client's real address still guards its veth
        assert not cluster.client_reaches_web(web)
        assert "-A KUBE-SERVICES -d 10.96.7.8/32 -p tcp -m tcp --dport 80" in rules  # the fine parts are served
    finally:
        with store.transaction():
            for plural, name in (("services", "evil"), ("services", "web"), ("endpointslices", "evil")):
                if store.get(plural, "default", name) is not None:
                    store.remove(plural, "default", name)
            store.put("pods", copy.deepcopy(original), "MODIFIED")


def _put_hostile_values(store, web: str, client_address: str) -> None:
    with store.transaction():
        client = copy.deepcopy(store.get("pods", "default", "client"))
        client["status"]["podIP"] = f"{client_address}/32 -j DROP\n{INJECTED}\n#"
        store.put("pods", client, "MODIFIED")
        service = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "evil", "namespace": "default", "uid": "evil-svc"},
                   "spec": {"clusterIP": f"10.96.7.7\n{INJECTED}", "ports": [
                       {"port": 80, "protocol": "TCP"}, {"port": "80 -j ACCEPT", "protocol": "TCP"},
                       {"port": 81, "protocol": "TCP -j ACCEPT\n" + INJECTED}]}}
        store.put("services", service, "ADDED")
        fine = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default", "uid": "w"},
                "spec": {"clusterIP": "10.96.7.8", "selector": {"app": "web"},
                         "ports": [{"name": "", "port": 80, "protocol": "TCP", "targetPort": 8080}]}}
        store.put("services", fine, "ADDED")
        store.put("endpointslices", {
            "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "addressType": "IPv4",
            "metadata": {"name": "evil", "namespace": "default", "uid": "evil-slice",
                         "labels": {"kubernetes.io/service-name": "web"}},
            "endpoints": [{"addresses": [f"{web}\nCOMMIT\n*filter\n{INJECTED}\nCOMMIT", web]}],
            "ports": [{"name": "", "port": 8080, "protocol": "TCP"},
                      {"name": "", "port": "8080\n" + INJECTED, "protocol": "TCP"}]}, "ADDED")


def test_a_policy_of_another_address_family_does_not_freeze_the_rules(cluster):
    # an IPv6 ipBlock is a valid policy; written as text into the IPv4 rules, it failed the whole restore, so every
    # later write (here: the deny that isolates web is deleted) stayed unenforced
    six = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": {"name": "six", "namespace": "default"},
           "spec": {"podSelector": {"matchLabels": {"app": "client"}}, "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"ipBlock": {"cidr": "fd00::/64"}}]}]}}
    web = cluster.address("web")
    cluster.server.apply_object(six)
    try:
        cluster.server.delete_object("NetworkPolicy", "default", "deny-web")
        cluster.node_rules()
        assert cluster.live.dataplane.errors == []
        assert cluster.client_reaches_web(web)
    finally:
        cluster.server.delete_object("NetworkPolicy", "default", "six")
        cluster.server.apply_object(DENY_WEB)
        cluster.node_rules()
