"""A Mininet network for one episode: build, run argv commands inside nodes, tear down completely.

Nothing of the network lives in the host's network namespace: the switches are Linux bridges made
inside a "fabric" namespace of the episode's own (a Mininet node with no address, IPv6 off), and
every veth pair is created between a node's namespace and the fabric. So no frame a node sends can
reach the host's stack (no bridge has an address there, link-local or other), and killing the
node and fabric shells takes every interface of the episode with their namespaces.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from ....core.process import run_bounded
from .leases import Lease, leftover_links, leftover_processes, remove_leftovers
from ..topology import Topology

#: per-command limits for commands the agent (or a fault) runs in a node
COMMAND_TIMEOUT_S = 5.0
OUTPUT_LIMIT = 16_000


@dataclass(frozen=True)
class CommandResult:
    """What one command did inside a node."""

    argv: tuple[str, ...]
    returncode: int | None  #: None when it timed out and was killed
    output: str  #: stdout and stderr, truncated to the output limit
    truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


class Network:
    """One running Mininet network (router + Linux bridges + hosts, no controller)."""

    def __init__(self, topology: Topology, lease: Lease) -> None:
        self.topology = topology
        self.lease = lease
        self.net = None
        self.fabric = None  #: the Mininet node whose namespace holds the episode's bridges
        self.pids: dict[str, int] = {}

    def start(self) -> None:
        from .mininet_import import import_mininet

        import_mininet()
        from mininet.log import setLogLevel
        from mininet.net import Mininet
        from mininet.node import Node

        setLogLevel("error")
        topo = self.topology
        net = Mininet(topo=None, switch=_fabric_bridge_class(), controller=None, build=False, waitConnected=False)
        self.net = net
        self.fabric = Node(topo.fabric, inNamespace=True)
        # the fabric is pure layer 2: no IPv6 (no link-local address, no router advertisements) on anything made there
        self.fabric.cmd("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 "
                        "net.ipv6.conf.all.accept_ra=0 net.ipv6.conf.default.accept_ra=0")
        # and frames crossing a bridge skip netfilter (these settings are the fabric's own since Linux 5.3;
        # where they are not, the keys do not exist here and nothing changes)
        self.fabric.cmd("sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0 "
                        "net.bridge.bridge-nf-call-arptables=0 2>/dev/null")
        router = net.addHost(topo.router, ip=None)
        for k in range(1, topo.subnets + 1):
            switch = net.addSwitch(topo.switch(k), fabric=self.fabric)
            net.addLink(router, switch, intfName1=topo.router_intf(k), params1={"ip": f"{topo.gateway(k)}/24"})
            for j in range(1, topo.hosts + 1):
                host = net.addHost(topo.host(k, j), ip=f"{topo.host_ip(k, j)}/24", defaultRoute=f"via {topo.gateway(k)}")
                net.addLink(host, switch)
        net.build()
        net.start()
        self._wait_for_fabric()
        self.pids = {node.name: node.pid for node in net.hosts}
        result = self.run(topo.router, ["sysctl", "-w", "net.ipv4.ip_forward=1"])
        if not result.ok:
            raise RuntimeError(f"cannot enable forwarding on the router: {result.output}")

    def _wait_for_fabric(self, timeout_s: float = 3.0) -> None:
        """Wait until every bridge and port of the fabric is operationally up. Linux applies a carrier change
        (and attaches the port's qdisc) from a queue it runs at most once a second: until then the first
        port of a new network drops frames, and the healthy pingmesh would see unreachable pairs."""
        from .netlink import Netlink

        sock = Netlink(self.fabric.pid)
        try:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if all(link.up for link in sock.links()):
                    return
                time.sleep(0.02)
        finally:
            sock.close()

    def run(self, node: str, argv: list[str], timeout_s: float = COMMAND_TIMEOUT_S, limit: int = OUTPUT_LIMIT) -> CommandResult:
        """Run argv (no shell) inside node's namespaces with a timeout and an output limit."""
        try:
            result = run_bounded(
                ["mnexec", "-a", str(self.pids[node]), *argv],
                timeout_s,
                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"},
                limit=limit + 1,
            )
            text, code = result.text, result.returncode
        except OSError as error:
            return CommandResult(tuple(argv), 127, f"cannot run {argv[0]}: {error}")
        truncated = len(text) > limit
        if truncated:
            text = text[:limit] + f"\n[output truncated to {limit} characters]"
        if code is None:
            text += f"\n[command killed after {timeout_s:g} s timeout]"
        return CommandResult(tuple(argv), code, text, truncated)

    def stop(self) -> None:
        """Tear the network down; whatever survives Mininet's stop is removed by prefix."""
        net, self.net = self.net, None
        fabric, self.fabric = self.fabric, None
        if net is not None or fabric is not None:
            try:
                _fast_stop([*(net.hosts if net else ()), *(net.switches if net else ()), *([fabric] if fabric else [])])
            finally:
                remove_leftovers(self.lease.prefix)
        else:
            remove_leftovers(self.lease.prefix)
        if leftover_links(self.lease.prefix) or leftover_processes(self.lease.prefix):
            time.sleep(0.05)
            remove_leftovers(self.lease.prefix)
        self.lease.release()


def _fabric_bridge_class():
    """LinuxBridge whose shell (and so its bridge and ports) lives in the episode's fabric namespace."""
    from mininet.nodelib import LinuxBridge

    class FabricBridge(LinuxBridge):
        def __init__(self, name, fabric, **params) -> None:
            self.fabric = fabric
            params["inNamespace"] = False  # no namespace of its own: it joins the fabric's (see startShell)
            super().__init__(name, **params)

        def startShell(self, mnopts=None) -> None:  # noqa: N802 (Mininet's name)
            super().startShell(mnopts=f"-cda{self.fabric.pid}")  # mnexec -a: attach to the fabric's namespaces

    return FabricBridge


def _fast_stop(nodes) -> None:
    """Kill node, bridge and fabric shells: their namespaces go, and every interface with them."""
    for node in nodes:
        shell = node.shell
        if shell is not None and shell.poll() is None:
            try:
                os.killpg(shell.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for node in nodes:
        if node.shell is not None:
            node.shell.wait()
        for handle in (getattr(node, "stdin", None),):
            try:
                handle and handle.close()
            except OSError:
                pass
        try:
            os.close(node.slave)
        except (OSError, TypeError, AttributeError):
            pass
        node.shell = None
