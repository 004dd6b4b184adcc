"""A minimal rtnetlink client bound to one network namespace: list, delete and configure links, qdiscs and tc filters.

It also brings a link up, gives it an IPv4 address and adds a default route: a new network's configuration, with no
process per setting.

Links come with their packet counters. The harness's own socket, made inside the namespace: no process per query.
Many links go in one request (`delete_links`: put them in a group, delete the group), which the kernel tears down
as one batch instead of one grace period per link."""

from __future__ import annotations

import os
import secrets
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from ....sandbox import NetNamespace

NETLINK_ROUTE = 0
RTM_DELLINK, RTM_GETLINK, RTM_SETLINK = 17, 18, 19
RTM_DELQDISC, RTM_GETQDISC = 37, 38
RTM_DELTFILTER, RTM_GETTFILTER = 45, 46
RTM_GETSTATS, IFLA_STATS_LINK_64 = 94, 1
RTM_NEWADDR, RTM_NEWROUTE = 20, 24
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x300, 0x200, 0x400
IFA_ADDRESS, IFA_LOCAL, IFA_BROADCAST = 1, 2, 4
RTA_GATEWAY, RT_TABLE_MAIN, RTPROT_BOOT, RTN_UNICAST = 5, 254, 3, 1  # RTPROT_BOOT: what `ip route add` sets
NLMSG_ERROR, NLMSG_DONE = 2, 3
IFLA_IFNAME, IFLA_OPERSTATE, IFLA_LINKINFO, IFLA_STATS64, IFLA_GROUP, IFLA_INFO_KIND = 3, 16, 18, 23, 27, 1
IF_OPER_UNKNOWN, IF_OPER_UP = 0, 6
TCA_KIND = 1
#: the ingress hook's filter parents (ffff:fff2, ffff:fff3), used by both ingress and clsact qdiscs
TC_H_INGRESS_PARENTS = (0xFFFFFFF2, 0xFFFFFFF3)

IFF_UP, IFF_LOWER_UP = 0x1, 0x10000  # net/if.h

HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port
IFINFO = struct.Struct("=BxHiII")  # ifinfomsg: family, type, index, flags, change
_TCMSG = struct.Struct("=BxxxiIII")
_STATS = struct.Struct("=BxxxiI")  # if_stats_msg: family, ifindex, filter mask
IFLA_STATS_LINK_64_MASK = 1 << (IFLA_STATS_LINK_64 - 1)  # tcmsg: family, ifindex, handle, parent, info
_ATTR = struct.Struct("=HH")
_IFADDR = struct.Struct("=BBBBi")  # ifaddrmsg: family, prefix length, flags, scope, ifindex
_RTMSG = struct.Struct("=BBBBBBBBI")  # rtmsg: family, dst len, src len, tos, table, protocol, scope, type, flags


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


def attributes(data: bytes, offset: int) -> Iterator[tuple[int, bytes]]:
    while offset + _ATTR.size <= len(data):
        length, kind = _ATTR.unpack_from(data, offset)
        if length < _ATTR.size:
            return
        yield kind & 0x3FFF, data[offset + _ATTR.size: offset + length]
        offset += (length + 3) & ~3


def text(value: bytes) -> str:
    return value.split(b"\0", 1)[0].decode(errors="replace")


def packets(stats64: bytes) -> int:
    """The packets a link has sent, from its IFLA_STATS64 attribute. Every frame that moves is sent by some link, so
    sent packets count each hop once; and a veth's received counts are its peer's sent ones, which it no longer
    reports in the notification of its deletion (its peer is gone by then)."""
    return struct.unpack_from("=QQ", stats64)[1]


def _u32_attribute(kind: int, value: int) -> bytes:
    return _ATTR.pack(_ATTR.size + 4, kind) + struct.pack("=I", value)


def _ipv4_attribute(kind: int, address: str) -> bytes:
    return _ATTR.pack(_ATTR.size + 4, kind) + socket.inet_aton(address)


class Netlink:
    """One NETLINK_ROUTE socket living in a node's (or the fabric's) network namespace."""

    def __init__(self, pid: int) -> None:
        namespace = NetNamespace.of_process(pid)
        try:
            self.sock = namespace.call(lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE))
        finally:
            namespace.close()
        self.sock.bind((0, 0))
        self._sequence = 0

    def close(self) -> None:
        self.sock.close()

    def _request(self, kind: int, flags: int, body: bytes) -> Iterator[tuple[int, bytes]]:
        """Send one request; yield (type, payload) of every answer until its end (raises OSError on an error)."""
        self._sequence += 1
        sequence = self._sequence
        self.sock.send(HEADER.pack(HEADER.size + len(body), kind, NLM_F_REQUEST | flags, sequence, 0) + body)
        while True:
            data = self.sock.recv(1 << 20)
            offset = 0
            while offset + HEADER.size <= len(data):
                length, answer, _, answered, _ = HEADER.unpack_from(data, offset)
                payload = data[offset + HEADER.size: offset + length]
                offset += (length + 3) & ~3
                if answered != sequence:
                    continue
                if answer == NLMSG_DONE:
                    return
                if answer == NLMSG_ERROR:
                    code = -struct.unpack_from("=i", payload)[0]
                    if code:
                        raise OSError(code, os.strerror(code))
                    return  # an acknowledgement
                yield answer, payload

    def links(self) -> list[Link]:
        found = []
        for _, payload in self._request(RTM_GETLINK, NLM_F_DUMP, IFINFO.pack(0, 0, 0, 0, 0)):
            _, _, index, flags, _ = IFINFO.unpack_from(payload)
            name, kind, count, up = "", "", 0, False
            for attribute, value in attributes(payload, IFINFO.size):
                if attribute == IFLA_IFNAME:
                    name = text(value)
                elif attribute == IFLA_STATS64:
                    count = packets(value)
                elif attribute == IFLA_OPERSTATE:
                    up = value[0] in (IF_OPER_UP, IF_OPER_UNKNOWN)
                elif attribute == IFLA_LINKINFO:
                    kind = next((text(inner) for key, inner in attributes(value, 0) if key == IFLA_INFO_KIND), "")
            carrier = flags & IFF_UP and flags & IFF_LOWER_UP
            found.append(Link(index, name, kind, count, up, bool(carrier and not up)))
        return found

    def sent(self) -> dict[int, int]:
        """Packets sent so far by every link (ifindex -> count): only the counters, far lighter than links()."""
        found = {}
        request = _STATS.pack(0, 0, IFLA_STATS_LINK_64_MASK)
        for _, payload in self._request(RTM_GETSTATS, NLM_F_DUMP, request):
            index = _STATS.unpack_from(payload)[1]
            for attribute, value in attributes(payload, _STATS.size):
                if attribute == IFLA_STATS_LINK_64:
                    found[index] = packets(value)
        return found

    def qdiscs(self) -> list[Qdisc]:
        """Qdiscs with a handle (the kernel's default ones, handle 0, are part of their link)."""
        found = []
        for _, payload in self._request(RTM_GETQDISC, NLM_F_DUMP, _TCMSG.pack(0, 0, 0, 0, 0)):
            _, index, handle, parent, _ = _TCMSG.unpack_from(payload)
            kind = next((text(value) for key, value in attributes(payload, _TCMSG.size) if key == TCA_KIND), "")
            if handle:
                found.append(Qdisc(index, handle, parent, kind))
        return found

    def filters(self, qdiscs: list[Qdisc]) -> list[Filter]:
        """The filters attached to these qdiscs (and, for ingress and clsact, to their two hooks)."""
        found: set[Filter] = set()
        for qdisc in qdiscs:
            if qdisc.kind in ("noqueue", "pfifo_fast", "mq", "noop"):
                continue  # cannot hold filters
            # an ingress qdisc has one block behind both hooks; clsact has one per hook
            parents = {"ingress": TC_H_INGRESS_PARENTS[:1], "clsact": TC_H_INGRESS_PARENTS}.get(qdisc.kind, (qdisc.handle,))
            for parent in parents:
                request = _TCMSG.pack(0, qdisc.index, 0, parent, 0)
                try:
                    for _, payload in self._request(RTM_GETTFILTER, NLM_F_DUMP, request):
                        _, index, _, _, info = _TCMSG.unpack_from(payload)
                        kind = next((text(v) for key, v in attributes(payload, _TCMSG.size) if key == TCA_KIND), "")
                        found.add(Filter(index, parent, info, kind))
                except OSError:
                    continue  # the qdisc went away meanwhile, or holds no filters
        return sorted(found, key=lambda f: (f.index, f.parent, f.info))

    def set_up(self, index: int) -> None:
        """`ip link set <link> up`."""
        list(self._request(RTM_SETLINK, NLM_F_ACK, IFINFO.pack(0, 0, index, IFF_UP, IFF_UP)))

    def add_address(self, index: int, address: str, prefix: int) -> None:
        """`ip addr add <address>/<prefix> brd + dev <link>` (the broadcast address ifconfig would set too)."""
        host_bits = (1 << (32 - prefix)) - 1
        broadcast = socket.inet_ntoa(struct.pack("!I", struct.unpack("!I", socket.inet_aton(address))[0] | host_bits))
        body = (_IFADDR.pack(socket.AF_INET, prefix, 0, 0, index) + _ipv4_attribute(IFA_LOCAL, address)
                + _ipv4_attribute(IFA_ADDRESS, address) + _ipv4_attribute(IFA_BROADCAST, broadcast))
        list(self._request(RTM_NEWADDR, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, body))

    def add_default_route(self, gateway: str) -> None:
        """`ip route add default via <gateway>`."""
        body = _RTMSG.pack(socket.AF_INET, 0, 0, 0, RT_TABLE_MAIN, RTPROT_BOOT, 0, RTN_UNICAST, 0)
        body += _ipv4_attribute(RTA_GATEWAY, gateway)
        list(self._request(RTM_NEWROUTE, NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, body))

    def delete_link(self, link: Link) -> None:
        list(self._request(RTM_DELLINK, NLM_F_ACK, IFINFO.pack(0, 0, link.index, 0, 0)))

    def delete_links(self, indexes: list[int]) -> None:
        """Delete these links in one batch: each joins a group no link of the namespace is in, then the group goes
        (the kernel unregisters them together; one request per link would wait one RCU grace period each)."""
        if not indexes:
            return
        group = secrets.randbelow(1 << 30) + (1 << 30)
        for index in indexes:
            try:
                list(self._request(RTM_SETLINK, NLM_F_ACK, IFINFO.pack(0, 0, index, 0, 0) + _u32_attribute(IFLA_GROUP, group)))
            except OSError:
                continue  # gone already (with its veth peer)
        try:
            list(self._request(RTM_DELLINK, NLM_F_ACK, IFINFO.pack(0, 0, 0, 0, 0) + _u32_attribute(IFLA_GROUP, group)))
        except OSError:  # a link of the group cannot be deleted (the kernel then deletes none): one by one
            for index in indexes:
                try:
                    list(self._request(RTM_DELLINK, NLM_F_ACK, IFINFO.pack(0, 0, index, 0, 0)))
                except OSError:
                    continue

    def delete_qdisc(self, qdisc: Qdisc) -> None:
        list(self._request(RTM_DELQDISC, NLM_F_ACK, _TCMSG.pack(0, qdisc.index, qdisc.handle, qdisc.parent, 0)))

    def delete_filter(self, found: Filter) -> None:
        # priority and protocol name the element; without a handle all of its rules go
        list(self._request(RTM_DELTFILTER, NLM_F_ACK, _TCMSG.pack(0, found.index, 0, found.parent, found.info)))
