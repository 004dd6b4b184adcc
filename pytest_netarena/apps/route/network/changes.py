"""What can change reachability in one node, noticed as it happens: the kernel's notifications, and what sends none.

A netlink socket of the harness, subscribed inside the node's namespace, is told at once of every change to its
links, addresses, routes, routing rules, next hops, qdiscs, tc filters and actions, neighbours set by hand and IPv4
forwarding settings (netconf), and a second one of every nftables change (iptables' default backend). Neighbour
entries the kernel learns by itself (every probe makes some) are not changes. Two things send no notification and
are read instead (`polled`): the rules and policies of the legacy iptables tables (firewall.py) and the node's
writable net sysctls (ipv4, core, netfilter: e.g. icmp_echo_ignore_all, arp_ignore), from descriptors opened in the
namespace once, whose values the harness reads from any thread (hundreds per node, kept from 1,024 up:
descriptors.py).
"""

from __future__ import annotations

import os

from ....netlink.messages import NDMSG, NETLINK_ROUTE, RTM_DELNEIGH, RTM_NEWNEIGH, messages, static_neighbour
from ....sandbox import NetNamespace
from .descriptors import kept_high, reserve
from .firewall import LegacyTables
from .monitor import NETLINK_NETFILTER, NFNLGRP_NFTABLES, subscribed

#: links, neighbours, tc, IPv4 addresses, routes and rules, IPv4 netconf (forwarding, rp_filter, proxy_arp ...),
#: next hops
GROUPS = (1, 3, 4, 5, 7, 8, 24, 32)
#: the sysctl trees read for changes (relative to /proc/sys/net), and the folders left out: neighbour timers, and
#: the settings of interfaces to come (conf/default) and of loopback
SYSCTL_TREES = ("ipv4", "core", "netfilter")
SKIPPED = ("/proc/sys/net/ipv4/neigh", "/proc/sys/net/ipv4/conf/default", "/proc/sys/net/ipv4/conf/lo")
def _writable_sysctls() -> dict[str, int]:
    """{path: descriptor} of every writable setting under SYSCTL_TREES (run inside the namespace: the descriptors
    keep reading its values). Read-only entries are state (counts), not settings, and change by themselves."""
    found: dict[str, int] = {}
    reserve(1024)
    for tree in SYSCTL_TREES:
        for folder, _, files in os.walk(f"/proc/sys/net/{tree}"):
            if folder.startswith(SKIPPED):
                continue
            for name in files:
                path = f"{folder}/{name}"
                try:
                    if not os.stat(path).st_mode & 0o222:
                        continue
                    found[path] = kept_high(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
                except OSError:
                    continue  # write-only (route/flush) or gone
    return found


class ChangeFeed:
    """One node's changes that can break reachability; made once per node, read beside each of its commands."""

    def __init__(self, pid: int) -> None:
        namespace = NetNamespace.of_process(pid)
        try:
            self.route = subscribed(namespace, NETLINK_ROUTE, GROUPS)
            self.netfilter = subscribed(namespace, NETLINK_NETFILTER, (NFNLGRP_NFTABLES,))
            self.sysctls = namespace.call(_writable_sysctls)
        finally:
            namespace.close()
        self.legacy = LegacyTables(pid)
        self._polled = self.polled_state()

    def fds(self) -> tuple[int, int]:
        return self.route.fileno(), self.netfilter.fileno()

    def arm(self) -> None:
        """Before a command: forget what happened until now (the harness's own probes, an earlier command)."""
        self.notified()
        self._polled = self.polled_state()

    def notified(self) -> bool:
        """Whether a change was notified since the last call (reads every queued notification)."""
        changed = False
        for sock in (self.route, self.netfilter):
            while True:
                try:
                    data = sock.recv(1 << 17)
                except BlockingIOError:
                    break
                except OSError:
                    changed = True  # ENOBUFS: notifications were lost, so something changed
                    continue
                changed |= sock is self.netfilter or _route_change(data)
        return changed

    def polled(self) -> bool:
        """Whether the legacy tables or a sysctl differ from the last reading."""
        now = self.polled_state()
        changed, self._polled = now != self._polled, now
        return changed

    def polled_state(self) -> tuple[bytes, ...]:
        values = []
        for fd in self.sysctls.values():
            try:
                values.append(os.pread(fd, 4096, 0))
            except OSError:
                values.append(b"?")
        return (self.legacy.fingerprint(), *values)

    def close(self) -> None:
        self.route.close()
        self.netfilter.close()
        self.legacy.close()
        for fd in self.sysctls.values():
            os.close(fd)
        self.sysctls = {}


def _route_change(data: bytes) -> bool:
    """Whether a batch of rtnetlink notifications holds a change (anything but a neighbour the kernel learnt)."""
    for kind, _, payload in messages(data):
        if kind not in (RTM_NEWNEIGH, RTM_DELNEIGH) or len(payload) < NDMSG.size or static_neighbour(payload):
            return True
    return False

