"""The rtnetlink client: one socket made inside a network namespace, one request per reading or change.

It lists, makes, configures and deletes the namespace's links, addresses, routes, qdiscs and tc filters with no process
per step. A socket made inside a namespace stays there, whichever thread uses it later. Many links go in one request
(`delete_links`: put them in a group, delete the group), which the kernel tears down as one batch instead of one
grace period per link.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ..sandbox import NetNamespace
from .messages import (
    IF_OPER_UNKNOWN, IF_OPER_UP, IFA_ADDRESS, IFA_BROADCAST, IFA_LOCAL, IFADDR, IFF_LOWER_UP, IFF_UP, IFINFO,
    IFLA_GROUP, IFLA_IFNAME, IFLA_INFO_DATA, IFLA_INFO_KIND, IFLA_LINKINFO, IFLA_NET_NS_FD, IFLA_OPERSTATE,
    IFLA_STATS64, IFLA_STATS_LINK_64, IFLA_STATS_LINK_64_MASK, NETLINK_ROUTE, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP,
    NLM_F_EXCL, NLM_F_REPLACE, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR, RT_SCOPE_HOST, RT_SCOPE_LINK,
    RT_SCOPE_UNIVERSE, RT_TABLE_LOCAL, RT_TABLE_MAIN, RTA_DST, RTA_GATEWAY, RTA_OIF, RTM_DELLINK, RTM_DELQDISC,
    RTM_DELTFILTER, RTM_GETLINK, RTM_GETQDISC, RTM_GETSTATS, RTM_GETTFILTER, RTM_NEWADDR, RTM_NEWLINK,
    RTM_NEWROUTE, RTM_SETLINK, RTMSG, RTN_LOCAL, RTN_UNICAST, RTPROT_BOOT, STATS, TC_H_INGRESS_PARENTS, TCA_KIND,
    TCMSG, HEADER, VETH_INFO_PEER, attribute, attributes, ipv4, messages, name, packets, text, u32,
)

SIOCGIFINDEX = 0x8933  # linux/sockios.h
#: what one read of the socket can take (a buffer of this size is only reserved while it reads): a dump's
#: datagrams stay well below it
RECEIVE_SIZE = 1 << 20


@dataclass(frozen=True)
class Link:
    index: int
    name: str
    kind: str  #: "veth", "bridge", ... ("" for loopback and plain devices)
    packets: int  #: packets sent so far (for the storm budget)
    up: bool = False  #: operationally up (carrier seen by the kernel, qdisc attached)
    settling: bool = False  #: set up with a carrier, but the kernel has not made it operational yet (link-watch)


@dataclass(frozen=True)
class Qdisc:
    index: int  #: the link's ifindex
    handle: int
    parent: int
    kind: str


@dataclass(frozen=True)
class Filter:
    """One element of a filter list (a priority and protocol), whatever number of rules and handles it holds."""

    index: int
    parent: int
    info: int  #: priority << 16 | protocol
    kind: str


def open_socket() -> socket.socket:
    """A bound NETLINK_ROUTE socket in the calling thread's namespace."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    sock.bind((0, 0))
    return sock


def _kind_of(payload: bytes, offset: int) -> str:
    """The TCA_KIND of a qdisc's or filter's message."""
    return next((text(value) for key, value in attributes(payload, offset) if key == TCA_KIND), "")


class Netlink:
    """One NETLINK_ROUTE socket living in a network namespace (a pod's, a node's, the fabric's)."""

    def __init__(self, sock: socket.socket) -> None:
        """sock: a bound NETLINK_ROUTE socket made inside the namespace (`open_socket` in a thread there)."""
        self.sock = sock
        self._sequence = 0

    @classmethod
    def inside(cls, namespace: NetNamespace) -> Netlink:
        return cls(namespace.call(open_socket))

    @classmethod
    def of_process(cls, pid: int) -> Netlink:
        """A socket in the network namespace process pid is in (a Mininet node's shell, or our own)."""
        namespace = NetNamespace.of_process(pid)
        try:
            return cls.inside(namespace)
        finally:
            namespace.close()

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Netlink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the protocol --------------------------------------------------------------------------------------------

    def _request(self, kind: int, flags: int, body: bytes) -> Iterator[tuple[int, bytes]]:
        """Send one request; yield (type, payload) of every answer until its end (OSError on a refusal)."""
        self._sequence += 1
        sequence = self._sequence
        self.sock.send(HEADER.pack(HEADER.size + len(body), kind, NLM_F_REQUEST | flags, sequence, 0) + body)
        while True:
            for answer, answered, payload in messages(self.sock.recv(RECEIVE_SIZE)):
                if answered != sequence:
                    continue
                if answer == NLMSG_DONE:
                    return
                if answer == NLMSG_ERROR:
                    code = -struct.unpack_from("=i", payload)[0]
                    if code:
                        raise OSError(code, f"netlink: {os.strerror(code)}")
                    return  # an acknowledgement
                yield answer, payload

    def _call(self, kind: int, flags: int, body: bytes) -> None:
        """One request that changes something; returns once the kernel acknowledged it."""
        for _ in self._request(kind, NLM_F_ACK | flags, body):
            pass

    def _dump(self, kind: int, body: bytes) -> Iterator[bytes]:
        for _, payload in self._request(kind, NLM_F_DUMP, body):
            yield payload

    # -- reading -------------------------------------------------------------------------------------------------

    def index(self, name: str) -> int:
        """The index of interface `name` in the socket's namespace (if_nametoindex would ask the caller's)."""
        answer = fcntl.ioctl(self.sock.fileno(), SIOCGIFINDEX, struct.pack("16si12x", name.encode(), 0))
        return int(struct.unpack("16si12x", answer)[1])

    def links(self) -> list[Link]:
        found = []
        for payload in self._dump(RTM_GETLINK, IFINFO.pack(0, 0, 0, 0, 0)):
            _, _, index, flags, _ = IFINFO.unpack_from(payload)
            link_name, kind, count, up = "", "", 0, False
            for key, value in attributes(payload, IFINFO.size):
                if key == IFLA_IFNAME:
                    link_name = text(value)
                elif key == IFLA_STATS64:
                    count = packets(value)
                elif key == IFLA_OPERSTATE:
                    up = value[0] in (IF_OPER_UP, IF_OPER_UNKNOWN)
                elif key == IFLA_LINKINFO:
                    kind = next((text(inner) for inner_key, inner in attributes(value, 0) if inner_key == IFLA_INFO_KIND),
                                "")
            carrier = flags & IFF_UP and flags & IFF_LOWER_UP
            found.append(Link(index, link_name, kind, count, up, bool(carrier and not up)))
        return found

    def sent(self) -> dict[int, int]:
        """Packets sent so far by every link (ifindex -> count): only the counters, far lighter than links()."""
        found = {}
        for payload in self._dump(RTM_GETSTATS, STATS.pack(0, 0, IFLA_STATS_LINK_64_MASK)):
            index = STATS.unpack_from(payload)[1]
            for key, value in attributes(payload, STATS.size):
                if key == IFLA_STATS_LINK_64:
                    found[index] = packets(value)
        return found

    def qdiscs(self) -> list[Qdisc]:
        """Qdiscs with a handle (the kernel's default ones, handle 0, are part of their link)."""
        found = []
        for payload in self._dump(RTM_GETQDISC, TCMSG.pack(0, 0, 0, 0, 0)):
            _, index, handle, parent, _ = TCMSG.unpack_from(payload)
            if handle:
                found.append(Qdisc(index, handle, parent, _kind_of(payload, TCMSG.size)))
        return found

    def filters(self, qdiscs: list[Qdisc]) -> list[Filter]:
        """The filters attached to these qdiscs (and, for ingress and clsact, to their two hooks)."""
        found: set[Filter] = set()
        for qdisc in qdiscs:
            if qdisc.kind in ("noqueue", "pfifo_fast", "mq", "noop"):
                continue  # cannot hold filters
            # an ingress qdisc has one block behind both hooks; clsact has one per hook
            parents = {"ingress": TC_H_INGRESS_PARENTS[:1], "clsact": TC_H_INGRESS_PARENTS}.get(qdisc.kind,
                                                                                              (qdisc.handle,))
            for parent in parents:
                try:
                    for payload in self._dump(RTM_GETTFILTER, TCMSG.pack(0, qdisc.index, 0, parent, 0)):
                        _, index, _, _, info = TCMSG.unpack_from(payload)
                        found.add(Filter(index, parent, info, _kind_of(payload, TCMSG.size)))
                except OSError:
                    continue  # the qdisc went away meanwhile, or holds no filters
        return sorted(found, key=lambda f: (f.index, f.parent, f.info))

    # -- making and changing -------------------------------------------------------------------------------------

    def add_veth(self, link_name: str, peer: str, peer_namespace: NetNamespace) -> None:
        """A veth pair: `link_name` here, `peer` made directly inside peer_namespace."""
        peer_info = IFINFO.pack(0, 0, 0, 0, 0) + name(IFLA_IFNAME, peer) + u32(IFLA_NET_NS_FD, peer_namespace.fd)
        info = attribute(IFLA_INFO_KIND, b"veth") + attribute(IFLA_INFO_DATA, attribute(VETH_INFO_PEER, peer_info))
        body = IFINFO.pack(0, 0, 0, 0, 0) + name(IFLA_IFNAME, link_name) + attribute(IFLA_LINKINFO, info)
        self._call(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, body)

    def set_up(self, index: int) -> None:
        """`ip link set <link> up`."""
        self._call(RTM_SETLINK, 0, IFINFO.pack(0, 0, index, IFF_UP, IFF_UP))

    def add_address(self, index: int, address: str, prefix: int = 32) -> None:
        """`ip addr add <address>/<prefix> brd + dev <link>`: the broadcast address (as ifconfig sets it too) only
        where the prefix leaves one, up to /30."""
        body = (IFADDR.pack(socket.AF_INET, prefix, 0, RT_SCOPE_UNIVERSE, index) + ipv4(IFA_LOCAL, address)
                + ipv4(IFA_ADDRESS, address))
        if prefix <= 30:
            host_bits = (1 << (32 - prefix)) - 1
            broadcast = struct.unpack("!I", socket.inet_aton(address))[0] | host_bits
            body += ipv4(IFA_BROADCAST, socket.inet_ntoa(struct.pack("!I", broadcast)))
        self._call(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, body)

    def add_route(self, destination: str, prefix: int, index: int | None = None, gateway: str | None = None,
                  local: bool = False, replace: bool = False) -> None:
        """`ip route add <destination>/<prefix>` through link `index` (directly, scope link) or via gateway (with or
        without a link); local: a range of addresses delivered to this namespace itself (`ip route add local ...`);
        replace: take the place of a route there already (`ip route replace`)."""
        scope = RT_SCOPE_HOST if local else RT_SCOPE_UNIVERSE if gateway else RT_SCOPE_LINK
        table, kind = (RT_TABLE_LOCAL, RTN_LOCAL) if local else (RT_TABLE_MAIN, RTN_UNICAST)
        body = RTMSG.pack(socket.AF_INET, prefix, 0, 0, table, RTPROT_BOOT, scope, kind, 0)
        if prefix:
            body += ipv4(RTA_DST, destination)
        if index is not None:
            body += attribute(RTA_OIF, struct.pack("=i", index))
        if gateway:
            body += ipv4(RTA_GATEWAY, gateway)
        self._call(RTM_NEWROUTE, NLM_F_CREATE | (NLM_F_REPLACE if replace else NLM_F_EXCL), body)

    # -- deleting ------------------------------------------------------------------------------------------------

    def delete_link(self, index: int) -> None:
        """Delete a link (a veth takes its peer along)."""
        self._call(RTM_DELLINK, 0, IFINFO.pack(0, 0, index, 0, 0))

    def delete_links(self, indexes: list[int]) -> None:
        """Delete these links in one batch: each joins a group no link of the namespace is in, then the group goes
        (the kernel unregisters them together; one request per link would wait one RCU grace period each)."""
        if not indexes:
            return
        group = secrets.randbelow(1 << 30) + (1 << 30)
        for index in indexes:
            try:
                self._call(RTM_SETLINK, 0, IFINFO.pack(0, 0, index, 0, 0) + u32(IFLA_GROUP, group))
            except OSError:
                continue  # gone already (with its veth peer)
        try:
            self._call(RTM_DELLINK, 0, IFINFO.pack(0, 0, 0, 0, 0) + u32(IFLA_GROUP, group))
        except OSError:  # a link of the group cannot be deleted (the kernel then deletes none): one by one
            for index in indexes:
                try:
                    self.delete_link(index)
                except OSError:
                    continue

    def delete_qdisc(self, qdisc: Qdisc) -> None:
        self._call(RTM_DELQDISC, 0, TCMSG.pack(0, qdisc.index, qdisc.handle, qdisc.parent, 0))

    def delete_filter(self, found: Filter) -> None:
        # priority and protocol name the element; without a handle all of its rules go
        self._call(RTM_DELTFILTER, 0, TCMSG.pack(0, found.index, 0, found.parent, found.info))
