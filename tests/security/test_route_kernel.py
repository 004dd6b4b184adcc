"""Attacks through the kernel's network from an agent's command on a Mininet node: reaching a listener in the host's
namespace over the switches' IPv6 link-local addresses, and a tc mirred loop (a kernel object that outlives its
box) storming the machine. Real Mininet, real boxes, a listener and counters the test made (root, Mininet)."""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import socket
import subprocess
import threading
import time
from collections.abc import Iterator

import pytest

from pytest_netarena.apps.route.agents.builtin import action
from pytest_netarena.apps.route.network.leases import leftover_links

from .conftest import FORWARD_OFF, needs_route, route_query

pytestmark = needs_route


@pytest.fixture(scope="module")
def env(route_env):
    return route_env


class HostListeners:
    """A TCP and a UDP listener on [::] (every address, both families) in the host's namespace, answering a token."""

    def __init__(self) -> None:
        self.token = f"HOSTREPLY-{secrets.token_hex(6)}"
        self.reached: list[str] = []
        self.tcp = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.udp = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        for sock in (self.tcp, self.udp):
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind(("::", 0))
            sock.settimeout(0.2)
        self.tcp.listen(16)
        self.ports = (self.tcp.getsockname()[1], self.udp.getsockname()[1])
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._serve_tcp), threading.Thread(target=self._serve_udp)]
        for thread in self._threads:
            thread.start()

    def _serve_tcp(self) -> None:
        while not self._stop.is_set():
            try:
                connection, peer = self.tcp.accept()
            except (TimeoutError, OSError):
                continue
            self.reached.append(f"tcp from {peer[0]}")
            connection.sendall(self.token.encode() + b"\n")
            connection.close()

    def _serve_udp(self) -> None:
        while not self._stop.is_set():
            try:
                _, peer = self.udp.recvfrom(512)
            except (TimeoutError, OSError):
                continue
            self.reached.append(f"udp from {peer[0]}")
            self.udp.sendto(self.token.encode() + b"\n", peer)

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.tcp.close()
        self.udp.close()


@pytest.fixture
def host_listeners() -> Iterator[HostListeners]:
    listeners = HostListeners()
    try:
        yield listeners
    finally:
        listeners.close()


def host_addresses(prefix: str) -> tuple[list[str], list[str]]:
    """The host namespace's link-local addresses on the episode's interfaces (its bridges and their ports, if any
    are there), and its other non-loopback addresses."""
    found = json.loads(subprocess.run(["ip", "-j", "addr"], capture_output=True, text=True, check=True).stdout)
    local, other = [], []
    for link in found:
        for entry in link.get("addr_info", []):
            address = ipaddress.ip_address(entry["local"])
            if address.is_loopback:
                continue
            if address.is_link_local and address.version == 6:
                if link["ifname"].startswith(prefix):
                    local.append(str(address))
            elif not address.is_link_local:
                other.append(str(address))
    return sorted(set(local)), sorted(set(other))[:8]


def reach_script(link_local: list[str], other: list[str], tcp_port: int, udp_port: int) -> str:
    """Try TCP and UDP to every target from every interface of the node (link-local ones scoped to it), a few at a
    time; neighbours answering the all-nodes multicast ping are targets too."""
    try_one = (f'( timeout 0.5 bash -c "exec 3<>/dev/tcp/$t/{tcp_port} && cat <&3"; '
               f'timeout 0.5 bash -c "exec 3<>/dev/udp/$t/{udp_port} && printf PING >&3 && head -c 64 <&3" ) 2>/dev/null &'
               ' n=$((n+1)); [ $((n % 5)) = 0 ] && wait')
    return "\n".join([
        "for i in $(seq 30); do ip -6 addr | grep -q tentative || break; sleep 0.1; done",  # wait for DAD
        "devs=$(ip -o link | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -v '^lo$')",
        "for d in $devs; do ping -6 -c2 -i0.2 -W1 ff02::1%$d >/dev/null 2>&1; done",
        "found=$(ip -6 neigh | awk '$1 ~ /^fe80/ {print $1\"%\"$3}')",
        "n=0",
        f"for d in $devs; do for a in {' '.join(link_local)}; do t=$a%$d; {try_one}; done; done",
        f"for t in $found {' '.join(other)}; do {try_one}; done",
        "wait; echo ATTEMPTS $n",
    ])


def test_a_node_cannot_reach_a_host_listener_over_the_switches_link_local_addresses(env, forward_off, host_listeners):
    prefix = forward_off.prefix
    link_local, other = host_addresses(prefix)
    env.command_timeout_s = 20.0
    try:
        outputs = []
        for node in (forward_off.host(1, 1), forward_off.router):
            outcome = env.step(action(node, reach_script(link_local, other, *host_listeners.ports)))
            assert not outcome.refused, outcome.output
            outputs.append(outcome.output)
    finally:
        env.command_timeout_s = 5.0
    attempts = [int(line.split()[1]) for output in outputs for line in output.splitlines() if line.startswith("ATTEMPTS")]
    assert len(attempts) == 2 and min(attempts) >= 1, outputs  # each node tried at least its neighbours
    assert host_listeners.reached == [] and host_listeners.token not in "".join(outputs), (host_listeners.reached, outputs)
    assert leftover_links(prefix) == []  # no interface of the running episode is in the host's namespace


STORM = ("ip link add va type veth peer name vb && ip link set va up && ip link set vb up && "
         "tc qdisc add dev va ingress && tc qdisc add dev vb ingress && "
         "tc filter add dev va parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev va && "
         "tc filter add dev vb parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev vb && "
         "ping -c1 -W0.2 -I va 10.99.99.99 >/dev/null; echo SENT")
QUIET = ("ip link add vq type veth peer name vr && tc qdisc add dev vq ingress && "
         "tc filter add dev vq parent ffff: protocol all u32 match u32 0 0 action mirred egress redirect dev vr && echo MADE")


def in_namespace(fd: int, *argv: str) -> str:
    """argv run in the network namespace this process holds open by fd (alive after the node's shell is gone)."""
    return subprocess.run(["nsenter", f"--net=/proc/self/fd/{fd}", *argv], capture_output=True, text=True,
                          pass_fds=(fd,), check=False).stdout


def link_packets(fd: int, name: str) -> int | None:
    found = json.loads(in_namespace(fd, "ip", "-j", "-s", "link", "show") or "[]")
    for link in found:
        if link["ifname"] == name:
            return link["stats64"]["rx"]["packets"] + link["stats64"]["tx"]["packets"]
    return None


def test_a_tc_mirred_loop_is_stopped_and_nothing_the_agent_made_outlives_the_episode(env, forward_off):
    router = forward_off.router
    # the test holds the router's namespace open, so deleting what the agent made is the only way it can go
    held = os.open(f"/proc/{env.network.pids[router]}/ns/net", os.O_RDONLY)
    try:
        outcome = env.step(action(router, STORM))
        # the loop starts while ping waits: the guard may stop the command before it prints SENT
        assert "SENT" in outcome.output or "the harness stopped the command" in outcome.output, outcome.output
        first = link_packets(held, "va")
        time.sleep(1.0)
        second = link_packets(held, "va")
        assert first is None or second is None or second - first < 20_000, f"the loop still runs: {first} -> {second}"
        assert any("traffic storm" in violation for violation in outcome.violations), outcome.violations
        assert "traffic storm" in outcome.observation
        assert any(node == router and "link va (veth)" in made and "filter u32 on va" in made
                   for node, made in env.kernel_log), env.kernel_log
        outcome = env.step(action(router, QUIET))  # objects that make no storm, left for the end of the episode
        assert "MADE" in outcome.output and not outcome.violations
        env.teardown()  # the episode ends
        names = {link["ifname"] for link in json.loads(in_namespace(held, "ip", "-j", "link"))}
        filters = in_namespace(held, "tc", "filter", "show", "dev", "vq", "ingress")
        assert not names & {"va", "vb", "vq", "vr"}, names
        assert filters.strip() == ""
    finally:
        for name in ("va", "vq"):
            in_namespace(held, "ip", "link", "del", name)  # stop the loop at once when the harness did not
        os.close(held)


def reflector(interface: str) -> str:
    """Every frame arriving on the interface is sent straight back out of it."""
    return (f"tc qdisc add dev {interface} ingress && tc filter add dev {interface} parent ffff: protocol all u32 "
            f"match u32 0 0 action mirred egress redirect dev {interface}")


def test_a_broadcast_loop_through_two_hosts_and_their_switch_is_stopped(env):
    env.reset(route_query(FORWARD_OFF, hosts=2))
    topo = env.topology
    first, second = topo.host(1, 1), topo.host(1, 2)
    try:
        env.step(action(first, reflector(topo.intf(first))))  # one reflector alone loops nothing
        outcome = env.step(action(second, f"{reflector(topo.intf(second))} && ping -c1 -W0.2 -b {topo.network(1)[:-4]}255"
                                          " >/dev/null 2>&1; echo KICKED"))
        # the ping set it off: the command ends, or the guard beside it stops it first once the loop storms
        assert "KICKED" in outcome.output or "traffic storm during the command" in outcome.output, outcome.output
        switch = env.network.fabric.pid  # a process in the switch's namespace (the fabric)
        before = link_packets_of(switch, topo.switch(1))
        time.sleep(1.0)
        after = link_packets_of(switch, topo.switch(1))
        assert after - before < 20_000, f"the loop still runs: {before} -> {after}"
        assert any("traffic storm" in violation for violation in outcome.violations), outcome.violations
        for host in (first, second):
            assert env.network.run(host, ["tc", "filter", "show", "dev", topo.intf(host), "ingress"]).output.strip() == ""
    finally:
        env.teardown()  # stops the loop with the namespaces when the harness did not


def link_packets_of(pid: int, name: str) -> int:
    """Received + sent packets of every port of a bridge, read in the namespace of process pid."""
    found = json.loads(subprocess.run(["nsenter", "-t", str(pid), "-n", "ip", "-j", "-s", "link", "show"],
                                      capture_output=True, text=True, check=True).stdout)
    return sum(link["stats64"]["rx"]["packets"] + link["stats64"]["tx"]["packets"]
               for link in found if link["ifname"].startswith(f"{name}-eth"))


def test_a_loop_set_off_while_the_agent_thinks_is_stopped_before_the_next_step(env, forward_off):
    router = forward_off.router
    # a loop armed with its links down: nothing moves during the step
    armed = STORM.replace("ip link set va up && ip link set vb up && ", "").replace(
        "ping -c1 -W0.2 -I va 10.99.99.99 >/dev/null; echo SENT", "echo ARMED")
    outcome = env.step(action(router, armed))
    assert "ARMED" in outcome.output and not outcome.violations
    held = os.open(f"/proc/{env.network.pids[router]}/ns/net", os.O_RDONLY)
    try:
        in_namespace(held, "ip", "link", "set", "vb", "up")
        in_namespace(held, "ip", "link", "set", "va", "up")  # as a kernel timer would, between two steps
        # the test sends the first packet itself: IPv6 autoconfiguration may send none for a second or more
        in_namespace(held, "ping", "-c1", "-W0.2", "-I", "va", "10.99.99.99")
        deadline = time.monotonic() + 15  # the watch samples every 0.5 s; a loaded machine may delay it
        while time.monotonic() < deadline:
            names = {link["ifname"] for link in json.loads(in_namespace(held, "ip", "-j", "link"))}
            if not names & {"va", "vb"}:
                break
            time.sleep(0.1)
        assert not names & {"va", "vb"}, names  # the watch removed them while no step ran
        outcome = env.step(action(router, "echo NEXT"))
        assert any("traffic storm between steps" in violation for violation in outcome.violations), outcome.violations
        assert "traffic storm between steps" in outcome.observation
    finally:
        in_namespace(held, "ip", "link", "del", "va")
        os.close(held)
