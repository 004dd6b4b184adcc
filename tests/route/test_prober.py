"""The pingmesh: a pair answers only by every protocol; answers that queue while the prober is descheduled still
count; a broken pair ends its rounds in bounded time; a round bigger than the TCP window completes; definite errors
are told from silence (root, Mininet)."""

from __future__ import annotations

import time

import pytest

from pytest_netarena.apps.route.network import prober as prober_module
from pytest_netarena.apps.route.network import rounds
from pytest_netarena.apps.route.network.mesh import Mesh
from pytest_netarena.apps.route.network.prober import Prober

from .conftest import needs_mininet, started_network

pytestmark = needs_mininet


@pytest.fixture(scope="module")
def network():
    with started_network(910) as (_, topo, network):
        healthy = Prober(network.pids, topo.address, topo.nodes)
        deadline = time.monotonic() + 5
        while not healthy.measure().complete and time.monotonic() < deadline:
            pass  # first neighbour resolutions
        healthy.close()
        yield topo, network


@pytest.fixture
def prober(network):
    topo, net = network
    made = Prober(net.pids, topo.address, topo.nodes)
    yield made
    made.close()


def everything(topo) -> frozenset:
    return frozenset(Mesh(topo.nodes, frozenset()).pairs)


def test_a_pair_answers_only_by_every_protocol(network, prober):
    topo, net = network
    tcp_refused, udp_dropped = topo.host(1, 1), topo.host(2, 1)
    # new connections and datagrams only: the answers to the node's own probes still come in
    assert net.run(tcp_refused, ["iptables", "-A", "INPUT", "-p", "tcp", "--syn", "-j", "REJECT"]).ok
    assert net.run(udp_dropped, ["iptables", "-A", "INPUT", "-p", "udp", "-m", "conntrack", "--ctstate", "NEW",
                                 "-j", "DROP"]).ok
    try:
        mesh = prober.measure(previous=everything(topo))
    finally:
        net.run(tcp_refused, ["iptables", "-F", "INPUT"])
        net.run(udp_dropped, ["iptables", "-F", "INPUT"])
    assert set(mesh.unreachable) == {(src, dst) for src, dst in mesh.pairs if dst in (tcp_refused, udp_dropped)}
    assert all(mesh.failed((src, tcp_refused)) == ("tcp",) for src in topo.nodes if src != tcp_refused)
    assert all(mesh.failed((src, udp_dropped)) == ("udp",) for src in topo.nodes if src != udp_dropped)
    assert mesh.errors[(topo.router, tcp_refused)] == "tcp: refused"  # a refusal is told from silence
    row = next(line for line in mesh.render().splitlines() if line.startswith(f"{topo.router} -> "))
    assert row == f"{topo.router} -> all except {tcp_refused}(tcp) {udp_dropped}(udp)"
    assert prober.measure(previous=everything(topo)).complete  # nothing of the probes is left behind


def test_answers_that_queued_while_the_prober_was_descheduled_still_count(network, monkeypatch):
    """The process loses the CPU right after a round sent its probes, for longer than any probe may wait: every
    answer, handshake and echo queues meanwhile, and is read before a probe is given up."""
    topo, net = network
    stall_s = 3 * rounds.ROUND_LIMIT * max(prober_module.ROUNDS_S)
    stalled = []
    start_tcp = rounds.Round._start_tcp

    def stalling(self) -> None:
        start_tcp(self)
        if not getattr(self, "stalled", False):
            self.stalled = True
            stalled.append(self)
            time.sleep(stall_s)

    monkeypatch.setattr(rounds.Round, "_start_tcp", stalling)
    prober = Prober(net.pids, topo.address, topo.nodes)
    try:
        mesh = prober.measure()
    finally:
        prober.close()
    assert stalled and all(probe.sent_at for probe in stalled[0].probes.values())
    assert mesh.complete, mesh.render()


def test_a_broken_pair_ends_its_rounds_in_bounded_time(network, prober):
    topo, net = network
    host = topo.host_names[0]
    assert net.run(host, ["ip", "link", "set", topo.intf(host), "down"]).ok
    try:
        started = time.monotonic()
        mesh = prober.measure(previous=everything(topo))
        took = time.monotonic() - started
    finally:
        net.run(host, ["ip", "link", "set", topo.intf(host), "up"])
        net.run(host, ["ip", "route", "add", "default", "via", topo.gateway(1)])  # went with the link
    assert {pair for pair in mesh.unreachable} == {pair for pair in mesh.pairs if host in pair}
    assert mesh.errors[(host, topo.router)].endswith("network unreachable")  # no route left on the host
    assert took < rounds.ROUND_LIMIT * sum(prober_module.ROUNDS_S) + 1.0, took


def test_a_round_bigger_than_the_tcp_window_completes(network, monkeypatch):
    """With room for 16 connections at once (as a process allowed few descriptors would have), the 42 TCP probes of
    a round go out as connections finish, and a dropped window does not stall the rest."""
    topo, net = network
    monkeypatch.setattr(prober_module, "_window", lambda probes: prober_module.MIN_WINDOW)
    prober = Prober(net.pids, topo.address, topo.nodes)
    try:
        assert prober.measure(previous=everything(topo)).complete
        dropped = topo.host(3, 1)
        assert net.run(dropped, ["iptables", "-A", "INPUT", "-p", "tcp", "--syn", "-j", "DROP"]).ok
        try:
            started = time.monotonic()
            mesh = prober.measure(previous=everything(topo))
            took = time.monotonic() - started
        finally:
            net.run(dropped, ["iptables", "-F", "INPUT"])
    finally:
        prober.close()
    assert set(mesh.unreachable) == {pair for pair in mesh.pairs if pair[1] == dropped}
    assert took < rounds.ROUND_LIMIT * sum(prober_module.ROUNDS_S) + 1.0, took


def test_icmp_only_probes_as_netarena_does(network):
    topo, net = network
    prober = Prober(net.pids, topo.address, topo.nodes, protocols=("icmp",))
    host = topo.host(1, 1)
    assert net.run(host, ["iptables", "-A", "INPUT", "-p", "tcp", "--syn", "-j", "REJECT"]).ok
    try:
        mesh = prober.measure()
    finally:
        net.run(host, ["iptables", "-F", "INPUT"])
        prober.close()
    assert mesh.complete and prober.sent == {"icmp": len(mesh.pairs)}
