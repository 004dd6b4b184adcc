"""The kernel's change notifications in one namespace: the last counters of every deleted link, and what was added.

A netlink socket of the harness, subscribed inside the namespace to the kernel's multicast groups, is told of
every change as it happens: no process in the namespace can unsubscribe it. When a link is deleted the kernel's
RTM_DELLINK carries the link's counters at that moment, so the packets of a link made, used and deleted between
two readings are still counted. The additions (new links and their queues, qdiscs, tc filters, actions and
chains, routes, addresses, rules, static neighbours and bridge entries, next hops, and from a second socket the
nftables rules, chains, sets and set elements) are counted by kind, whatever made them. If
the socket's queue ever overflows (ENOBUFS), notifications were lost and the monitor says so: counts from then
on are not to be trusted.
"""

from __future__ import annotations

import errno
import socket
import struct
from collections import Counter
from dataclasses import dataclass

from ....netlink.messages import (
    IFINFO, IFLA_IFNAME, IFLA_STATS64, NETLINK_ROUTE, RTM_DELLINK, RTM_NEWLINK, RTM_NEWNEIGH, attributes, messages, packets,
    static_neighbour, text,
)
from ....sandbox import NetNamespace

IFLA_NUM_TX_QUEUES, IFLA_NUM_RX_QUEUES = 31, 32

SOL_NETLINK, NETLINK_ADD_MEMBERSHIP = 270, 1
SO_RCVBUFFORCE = 33
#: the multicast groups: links; then neighbours, tc, IPv4 addresses, routes and rules, IPv6 addresses, routes and
#: rules, next hops
LINK_GROUPS = (1,)
OBJECT_GROUPS = (3, 4, 5, 7, 8, 9, 11, 19, 32)
#: notification type -> the kind it adds
KINDS = {20: "addresses", 24: "routes", 32: "rules", 36: "qdiscs", 44: "filters", 48: "filters", 100: "filters",
         104: "nexthops"}
NETLINK_NETFILTER, NFNLGRP_NFTABLES = 12, 7
#: nftables notifications (subsystem 10): new table, chain, rule, set, set element, stateful object, flowtable
NFT_ADDS = {(10 << 8) | message for message in (0, 3, 6, 9, 12, 18, 22)}
#: the socket's queue (the kernel doubles it): thousands of notifications between two readings
RECEIVE_BUFFER = 4 << 20


@dataclass(frozen=True)
class Gone:
    """A link deleted, with its counters when it went."""

    index: int
    name: str
    packets: int


class Monitor:
    """One namespace's change notifications, read when asked (`drain`), never blocking."""

    def __init__(self, pid: int, count_objects: bool = True) -> None:
        namespace = NetNamespace.of_process(pid)
        try:
            self.sock = subscribed(namespace, NETLINK_ROUTE, LINK_GROUPS + (OBJECT_GROUPS if count_objects else ()))
            self.firewall = subscribed(namespace, NETLINK_NETFILTER, (NFNLGRP_NFTABLES,)) if count_objects else None
        finally:
            namespace.close()
        self.known: set[int] = set()  #: links present (by ifindex) as far as the notifications tell
        self.names: dict[int, str] = {}  #: their names
        self.reused: set[int] = set()  #: indexes given to a new link after one with that index went (`ip link add ... index N`)
        self.added: Counter[str] = Counter()  #: additions by kind since the monitor started
        self.gone: list[Gone] = []  #: deleted links not yet taken
        self.overflowed = False
        self._deleted: set[int] = set()

    def know(self, names: dict[int, str]) -> None:
        """The links present when watching began (ifindex -> name, listed after subscribing): their notifications
        add nothing."""
        self.known |= set(names)
        self.names.update(names)

    def drain(self) -> None:
        """Read every notification queued so far."""
        for sock in (self.sock, self.firewall):
            if sock is not None:
                self._drain(sock)

    def _drain(self, sock: socket.socket) -> None:
        while True:
            try:
                data = sock.recv(1 << 17)
            except BlockingIOError:
                return
            except OSError as error:
                if error.errno == errno.ENOBUFS:
                    self.overflowed = True
                    continue
                raise
            for kind, _, payload in messages(data):
                self._note(kind, payload)

    def _note(self, kind: int, payload: bytes) -> None:
        if kind in (RTM_NEWLINK, RTM_DELLINK) and len(payload) >= IFINFO.size:
            index = IFINFO.unpack_from(payload)[2]
            name, count, queues = self.names.get(index, ""), 0, 0
            for attribute, value in attributes(payload, IFINFO.size):
                if attribute == IFLA_IFNAME:
                    name = text(value)
                elif attribute == IFLA_STATS64 and len(value) >= 16:
                    count = packets(value)
                elif attribute in (IFLA_NUM_TX_QUEUES, IFLA_NUM_RX_QUEUES) and len(value) >= 4:
                    queues += struct.unpack_from("=I", value)[0]
            if kind == RTM_NEWLINK:
                self.names[index] = name
                if index not in self.known:
                    self.known.add(index)
                    self.added["links"] += 1
                    self.added["queues"] += queues  # each a kernel object of its own, torn down one by one
                    if index in self._deleted:
                        self.reused.add(index)
                return
            self.known.discard(index)
            self.names.pop(index, None)
            self._deleted.add(index)
            self.gone.append(Gone(index, name, count))
        elif kind == RTM_NEWNEIGH and static_neighbour(payload):
            # static neighbours and bridge entries stay until removed; dynamic ones are bounded by the kernel's gc
            self.added["neighbours"] += 1
        elif kind in KINDS:
            self.added[KINDS[kind]] += 1
        elif kind in NFT_ADDS:
            self.added["firewall"] += 1

    def take(self) -> tuple[list[Gone], set[int]]:
        """The links deleted and the indexes reused since the last call."""
        gone, reused = self.gone, self.reused
        self.gone, self.reused = [], set()
        return gone, reused

    def close(self) -> None:
        self.sock.close()
        if self.firewall is not None:
            self.firewall.close()


def subscribed(namespace: NetNamespace, protocol: int, groups: tuple[int, ...]) -> socket.socket:
    """A non-blocking netlink socket made inside the namespace, subscribed to these multicast groups."""
    sock = namespace.call(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, protocol))
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
    except OSError:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
    sock.bind((0, 0))
    for group in groups:
        sock.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, group)
    sock.setblocking(False)
    return sock

