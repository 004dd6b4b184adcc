"""A Mininet network for one episode: build, run argv commands inside nodes, tear down completely.

Nothing of the network lives in the host's network namespace: the switches are Linux bridges made
inside a "fabric" namespace of the episode's own (a Mininet node with no address, IPv6 off), and
every veth pair is created between a node's namespace and the fabric. So no frame a node sends can
reach the host's stack (no bridge has an address there, link-local or other), and killing the
node and fabric shells takes every interface of the episode with their namespaces.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ....core.process import run_bounded
from .leases import Lease, leftover_links, leftover_processes, remove_leftovers
from ..topology import Topology

#: per-command limits for commands the agent (or a fault) runs in a node
COMMAND_TIMEOUT_S = 5.0
OUTPUT_LIMIT = 16_000
COMMAND_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
#: node shells started at once (each mostly waits for its bash to print the prompt)
SHELL_STARTS = 8
#: open files a node's shell may hold (it runs nothing: every command is started by the harness)
NODE_SHELL_FILES = 256
FABRIC_SYSCTLS = {"net.ipv6.conf.all.disable_ipv6": "1", "net.ipv6.conf.default.disable_ipv6": "1",
                  "net.ipv6.conf.all.accept_ra": "0", "net.ipv6.conf.default.accept_ra": "0"}
BRIDGE_NETFILTER_OFF = {"net.bridge.bridge-nf-call-iptables": "0", "net.bridge.bridge-nf-call-ip6tables": "0",
                        "net.bridge.bridge-nf-call-arptables": "0"}


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
        self.nodes: dict[str, object] = {}  #: every Mininet node by name: the fabric, the router, the hosts
        self.fabric = None  #: the Mininet node whose namespace holds the episode's bridges
        self.pids: dict[str, int] = {}  #: the router's and the hosts' shells (what the agent's commands enter)

    def start(self) -> None:
        """Start every node's Mininet shell (its own network namespace) at once, then wire the network with one
        `ip -batch` in the fabric and configure each node by netlink: one process in all, not a shell round trip per
        setting."""
        from .mininet_import import import_mininet

        import_mininet()
        from mininet.log import setLogLevel
        from mininet.node import Node

        setLogLevel("error")
        topo = self.topology
        self._start_shells(_lean_node_class(Node), (topo.fabric, topo.router, *topo.host_names))
        self.fabric = self.nodes[topo.fabric]
        self.pids = {name: node.pid for name, node in self.nodes.items() if name != topo.fabric}
        # the fabric is pure layer 2: no IPv6 (no link-local address, no router advertisements) on anything made
        # there, so these are set before its first link; and frames crossing a bridge skip netfilter (these keys are
        # the fabric's own since Linux 5.3; where they are not, they do not exist here and nothing changes)
        write_sysctls(self.fabric.pid, FABRIC_SYSCTLS, optional=BRIDGE_NETFILTER_OFF)
        run_batch(self.fabric.pid, fabric_batch(topo, self.pids))
        for name in topo.nodes:
            configure_node(self.pids[name], topo, name)
        write_sysctls(self.pids[topo.router], {"net.ipv4.ip_forward": "1"})
        self._wait_for_fabric()

    def _start_shells(self, make: Callable[..., object], names: tuple[str, ...]) -> None:
        """Mininet's node shells, started together: each waits for its own shell's prompt, not for the others'."""
        with ThreadPoolExecutor(min(SHELL_STARTS, len(names))) as pool:
            started = {name: pool.submit(make, name, inNamespace=True) for name in names}
        failed = None
        for name, future in started.items():
            try:
                self.nodes[name] = future.result()
            except Exception as error:  # the others are still stopped, with every shell of the prefix
                failed = failed or error
        if failed is not None:
            raise failed

    def _wait_for_fabric(self, timeout_s: float = 3.0) -> None:
        """Wait until every bridge and port of the fabric is operationally up. Linux applies a carrier change
        (and attaches the port's qdisc) from a queue it runs at most once a second: until then the first
        port of a new network drops frames, and the healthy pingmesh would see unreachable pairs."""
        from ....netlink import Netlink

        sock = Netlink.of_process(self.fabric.pid)
        try:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if all(link.up for link in sock.links() if link.kind):  # its loopback stays down: not a port
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
                env=COMMAND_ENV,
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
        """Tear the network down; whatever survives the shells' end is removed by prefix."""
        nodes, self.nodes, self.fabric = list(self.nodes.values()), {}, None
        try:
            _fast_stop(nodes)
        finally:
            # one look (the namespace's links by netlink, the process table once); removal only if it found any
            if leftover_links(self.lease.prefix) or leftover_processes(self.lease.prefix):
                remove_leftovers(self.lease.prefix)
                if leftover_links(self.lease.prefix) or leftover_processes(self.lease.prefix):
                    time.sleep(0.05)
                    remove_leftovers(self.lease.prefix)
            self.lease.release()


@functools.cache
def _lean_node_class(node_class: type) -> type:
    """Mininet's Node, its shell started under a low open-files limit where `prlimit` exists: `mnexec -c` closes
    every descriptor up to that limit, one syscall each (20,000 here), a third of a node's start-up CPU. The limit
    is the node shell's alone: commands in a node are started by the harness (`mnexec -a`), with its limits."""
    prlimit = shutil.which("prlimit")
    if prlimit is None:
        return node_class

    class LeanNode(node_class):  # type: ignore[misc, valid-type]
        def _popen(self, cmd, **params):
            return super()._popen([prlimit, f"--nofile={NODE_SHELL_FILES}", "--", *cmd], **params)

    return LeanNode


def fabric_batch(topo: Topology, pids: dict[str, int]) -> list[str]:
    """`ip -batch` lines for the fabric: a bridge per subnet, and a veth pair from it to each node of the subnet,
    made here with the node's end moved at birth into the node's namespace (nothing passes through the host's).
    The port names are Mininet's (<switch>-eth1 for the router, then one per host)."""
    lines = []
    for k in range(1, topo.subnets + 1):
        switch = topo.switch(k)
        lines.append(f"link add name {switch} type bridge")
        ends = [(topo.router, topo.router_intf(k))] + [(topo.host(k, j), topo.intf(topo.host(k, j)))
                                                       for j in range(1, topo.hosts + 1)]
        for port, (node, intf) in enumerate(ends, start=1):
            lines.append(f"link add name {switch}-eth{port} type veth peer name {intf} netns {pids[node]}")
            lines.append(f"link set {switch}-eth{port} master {switch} up")
        lines.append(f"link set {switch} up")
    return lines


def configure_node(pid: int, topo: Topology, node: str) -> None:
    """What Mininet's config does to a node, by netlink from inside its namespace: loopback up, each interface's
    address (with the broadcast address ifconfig sets) and up, a host's default route via its subnet's gateway."""
    from ....netlink import Netlink

    sock = Netlink.of_process(pid)
    try:
        index = {link.name: link.index for link in sock.links()}
        sock.set_up(index["lo"])
        if node == topo.router:
            addresses = [(topo.router_intf(k), topo.gateway(k)) for k in range(1, topo.subnets + 1)]
        else:
            addresses = [(topo.intf(node), topo.address[node])]
        for intf, address in addresses:
            sock.add_address(index[intf], address, 24)
            sock.set_up(index[intf])
        if node != topo.router:
            sock.add_route("0.0.0.0", 0, gateway=topo.gateway(topo.subnet_of(node)))
    except (OSError, KeyError) as error:
        raise RuntimeError(f"cannot configure {node}: {error!r}") from error
    finally:
        sock.close()


def run_batch(pid: int, lines: list[str], timeout_s: float = 10.0) -> None:
    """`ip -batch -` in the namespaces of process pid; RuntimeError with ip's message when a line fails."""
    try:
        result = subprocess.run(["mnexec", "-a", str(pid), "ip", "-batch", "-"], input="\n".join(lines) + "\n",
                                capture_output=True, text=True, env=COMMAND_ENV, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as error:
        raise RuntimeError(f"ip -batch in process {pid}'s namespace did not finish in {timeout_s:g} s") from error
    if result.returncode:
        raise RuntimeError(f"ip -batch in process {pid}'s namespace: {(result.stderr + result.stdout).strip()}")


def write_sysctls(pid: int, values: dict[str, str], optional: dict[str, str] | None = None) -> None:
    """Set network sysctls of process pid's namespace (/proc/sys/net is the writing thread's namespace's):
    `values` must exist, `optional` ones are skipped where this kernel lacks them."""
    from ....sandbox import NetNamespace

    def write() -> None:
        for table, required in ((values, True), (optional or {}, False)):
            for key, value in table.items():
                try:
                    with open("/proc/sys/" + key.replace(".", "/"), "w") as handle:
                        handle.write(value)
                except FileNotFoundError:
                    if required:
                        raise

    namespace = NetNamespace.of_process(pid)
    try:
        namespace.call(write)
    finally:
        namespace.close()


def _fast_stop(nodes) -> None:
    """Kill the node and fabric shells: their namespaces go, and every interface with them."""
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
