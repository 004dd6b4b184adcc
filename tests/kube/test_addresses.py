"""The addresses and ports the live data plane reads are validated as a real API server validates them: a pod's
status IPs (through the status subresource too), a Service's ClusterIP and the allocator's range, EndpointSlices."""

from __future__ import annotations

import json

import pytest

from .conftest import call

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def _status(cluster, status: dict) -> tuple[int, dict]:
    return call(cluster, "PATCH", "/api/v1/namespaces/default/pods/p/status", {"status": status},
                "application/merge-patch+json")


def _messages(body: dict) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in body["details"]["causes"]]


def test_a_pod_status_holds_only_ip_addresses_one_per_family(cluster):
    assert call(cluster, "POST", "/api/v1/namespaces/default/pods", POD)[0] == 201
    bad = {"podIP": "10.244.0.9\n-I FORWARD 1 -j ACCEPT"}
    code, body = _status(cluster, bad)
    assert code == 422 and body["reason"] == "Invalid"
    assert _messages(body) == ['status.podIPs[0]: Invalid value: "10.244.0.9\\n-I FORWARD 1 -j ACCEPT": must be a '
                               'valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']
    code, body = _status(cluster, {"podIP": "10.244.0.9", "podIPs": [{"ip": "10.244.0.9"}, {"ip": "10.244.0.10"}]})
    assert code == 422 and "status.podIPs: Invalid value" in body["message"]
    assert "may specify no more than one IP for each IP family" in body["message"]
    code, body = _status(cluster, {"hostIP": "node-1"})
    assert code == 422 and 'status.hostIPs[0]: Invalid value: "node-1"' in body["message"]
    # podIP wins over a podIPs that differs, and either alone fills the other (v1's conversion)
    code, body = _status(cluster, {"podIP": "10.244.0.9", "podIPs": [{"ip": "10.244.0.77"}]})
    assert code == 200 and body["status"]["podIPs"] == [{"ip": "10.244.0.9"}]
    code, body = _status(cluster, {"podIP": None, "podIPs": [{"ip": "10.244.0.12"}, {"ip": "fd00::12"}]})
    assert code == 200 and body["status"]["podIP"] == "10.244.0.12"


def test_a_service_asks_for_a_cluster_ip_of_the_range_no_other_service_holds(cluster):
    def service(name: str, address: str) -> tuple[int, dict]:
        return call(cluster, "POST", "/api/v1/namespaces/default/services", {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"clusterIP": address, "ports": [{"port": 80}]}})

    code, body = service("a", "10.96.0.300")
    assert code == 422 and _messages(body) == [
        "spec.clusterIPs[0]: Invalid value: \"10.96.0.300\": must be empty, 'None', or a valid IP address"]
    code, body = service("a", "192.0.2.1")
    assert code == 422 and body["message"] == (
        'Service "a" is invalid: spec.clusterIPs: Invalid value: []string{"192.0.2.1"}: failed to allocate IP '
        "192.0.2.1: the provided IP (192.0.2.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12")
    assert service("a", "10.100.0.7")[0] == 201
    code, body = service("b", "10.100.0.7")
    assert code == 422 and body["message"].endswith("failed to allocate IP 10.100.0.7: provided IP is already allocated")


@pytest.mark.parametrize(("change", "message"), [
    ({"addressType": "IPv5"}, 'addressType: Unsupported value: "IPv5": supported values: "FQDN", "IPv4", "IPv6"'),
    ({"endpoints": [{"addresses": []}]}, "endpoints[0].addresses: Required value: must contain at least 1 address"),
    ({"endpoints": [{"addresses": ["10.244.0.5 -j ACCEPT"]}]},
     'endpoints[0].addresses[0]: Invalid value: "10.244.0.5 -j ACCEPT": must be a valid IPv4 address'),
    ({"endpoints": [{"addresses": ["fd00::5"]}]}, 'endpoints[0].addresses[0]: Invalid value: "fd00::5": must be a '
                                                  "valid IPv4 address"),
    ({"endpoints": [{"addresses": ["127.0.0.1"]}]},
     'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'),
    ({"endpoints": [{"addresses": ["169.254.1.1"]}]}, 'endpoints[0].addresses[0]: Invalid value: "169.254.1.1": may '
                                                      "not be in the link-local range (169.254.0.0/16, fe80::/10)"),
    ({"ports": [{"port": 8080, "protocol": "TCP -j ACCEPT"}]},
     'ports[0].protocol: Unsupported value: "TCP -j ACCEPT": supported values: "SCTP", "TCP", "UDP"'),
    ({"ports": [{"port": 70000, "protocol": "TCP"}]}, "ports[0].port: Invalid value: 70000: must be between 1 and "
                                                     "65535, inclusive"),
    ({"ports": [{"name": "Web", "port": 80}]}, 'ports[0].name: Invalid value: "Web": a lowercase RFC 1123 label'),
])
def test_an_endpoint_slice_holds_addresses_of_its_type_and_real_ports(cluster, change, message):
    body = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "s"},
            "addressType": "IPv4", "endpoints": [{"addresses": ["10.244.0.5"]}], "ports": [{"port": 80}], **change}
    code, answer = call(cluster, "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", body)
    assert code == 422, json.dumps(answer)
    assert answer["message"].startswith(f'EndpointSlice.discovery.k8s.io "s" is invalid: {message}')
    good = {**body, **{"addressType": "IPv4", "endpoints": [{"addresses": ["10.244.0.5"]}], "ports": [{"port": 80}]}}
    assert call(cluster, "POST", "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", good)[0] == 201
