"""The pingmesh on a loaded machine: answers that queue while the prober is descheduled still count, and a
broken pair still ends its rounds in bounded time (root, Mininet)."""

from __future__ import annotations

import time

import pytest

from pytest_netarena.apps.route.network import prober as prober_module
from pytest_netarena.apps.route.network.prober import Prober

from .conftest import needs_mininet, started_network

pytestmark = needs_mininet


class DescheduledProber(Prober):
    """A prober whose process loses the CPU for `stall_s` when it first reads its sockets in every round."""

    def __init__(self, *args, stall_s: float, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.stall_s, self.stalled_rounds, self._stall_due = stall_s, 0, False

    def _probe(self, pairs, index, timeout_s):
        self._stall_due = True
        return super()._probe(pairs, index, timeout_s)

    def _drain(self, node, probes, reached):
        if self._stall_due:
            self._stall_due = False
            self.stalled_rounds += 1
            time.sleep(self.stall_s)
        return super()._drain(node, probes, reached)


@pytest.fixture(scope="module")
def network():
    with started_network(910) as (_, topo, network):
        healthy = Prober(network.pids, topo.address, topo.nodes)
        deadline = time.monotonic() + 5
        while not healthy.measure().complete and time.monotonic() < deadline:
            pass  # first neighbour resolutions
        healthy.close()
        yield topo, network


def test_answers_that_queued_while_the_prober_was_descheduled_still_count(network):
    topo, net = network
    stall_s = 3 * max(prober_module.ROUNDS_S)  # longer than any round's own wait
    prober = DescheduledProber(net.pids, topo.address, topo.nodes, stall_s=stall_s)
    try:
        mesh = prober.measure()
    finally:
        prober.close()
    assert prober.stalled_rounds >= 1
    assert mesh.complete, mesh.render()


def test_a_broken_pair_ends_its_rounds_in_bounded_time(network):
    topo, net = network
    host = topo.host_names[0]
    assert net.run(host, ["ip", "link", "set", topo.intf(host), "down"]).ok
    prober = Prober(net.pids, topo.address, topo.nodes)
    try:
        started = time.monotonic()
        mesh = prober.measure(previous=frozenset(prober_module.Mesh(topo.nodes, frozenset()).pairs))
        took = time.monotonic() - started
    finally:
        prober.close()
        net.run(host, ["ip", "link", "set", topo.intf(host), "up"])
    assert {pair for pair in mesh.unreachable} == {pair for pair in mesh.pairs if host in pair}
    assert took < prober_module.ROUND_LIMIT * sum(prober_module.ROUNDS_S) + 1.0, took
