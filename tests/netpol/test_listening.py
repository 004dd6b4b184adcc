"""listening_ports: a pod accepts only on its declared container ports (named ports resolved)."""

from __future__ import annotations

from pytest_netarena.netpol import ConnectivityModel, ContainerPort, Pod, Probe, Service, ServicePort

SERVER = Pod("ns", "server", {"app": "server"}, "10.0.0.2", (ContainerPort(8080, "TCP", "http"),))
CLIENT = Pod("ns", "client", {"app": "client"}, "10.0.0.1")


def model(target, listening=True):
    service = Service("ns", "svc", {"app": "server"}, (ServicePort(80, target, "TCP", "web"),))
    return ConnectivityModel(pods=[SERVER, CLIENT], services=[service], listening_ports=listening)


def test_service_target_ports():
    for target, reachable in ((8080, True), ("http", True), (9090, False), ("grpc", False), (None, False)):
        m = model(target)
        probe = Probe.to_svc("ns/client", "ns/svc", 80)
        assert m.allowed(probe) is reachable, target
        assert m.matrix([probe])[probe] is reachable
        assert m.watch([probe]).results[probe] is reachable
        assert m.explain(probe).allowed is reachable


def test_without_listening_ports_only_policies_decide():
    probe = Probe.to_svc("ns/client", "ns/svc", 80)
    assert model(9090, listening=False).allowed(probe) is True


def test_pod_probes_and_the_explanation():
    m = model(8080)
    assert m.allowed(Probe.to_pod("ns/client", "ns/server", 8080))
    assert not m.allowed(Probe.to_pod("ns/client", "ns/server", 8081))
    assert not m.allowed(Probe.to_pod("ns/client", "ns/server", 8080, "UDP"))
    text = str(m.explain(Probe.to_pod("ns/client", "ns/server", 8081)))
    assert "does not listen on 8081/TCP" in text
