"""rtnetlink's wire format: message headers and attributes, packed and read, and the kernel's numbers we use."""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

NETLINK_ROUTE = 0
RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK, RTM_SETLINK = 16, 17, 18, 19
RTM_NEWADDR, RTM_NEWROUTE = 20, 24
RTM_NEWNEIGH, RTM_DELNEIGH = 28, 29
RTM_DELQDISC, RTM_GETQDISC = 37, 38
RTM_DELTFILTER, RTM_GETTFILTER = 45, 46
RTM_GETSTATS = 94
NLM_F_REQUEST, NLM_F_ACK = 0x1, 0x4
NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE, NLM_F_DUMP = 0x100, 0x200, 0x400, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
IFLA_IFNAME, IFLA_OPERSTATE, IFLA_LINKINFO, IFLA_STATS64, IFLA_GROUP, IFLA_NET_NS_FD = 3, 16, 18, 23, 27, 28
IFLA_INFO_KIND, IFLA_INFO_DATA, VETH_INFO_PEER = 1, 2, 1
IFLA_STATS_LINK_64 = 1
IFLA_STATS_LINK_64_MASK = 1 << (IFLA_STATS_LINK_64 - 1)
IF_OPER_UNKNOWN, IF_OPER_UP = 0, 6
IFF_UP, IFF_LOWER_UP = 0x1, 0x10000  # net/if.h
IFA_ADDRESS, IFA_LOCAL, IFA_BROADCAST = 1, 2, 4
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5
RT_TABLE_MAIN, RT_TABLE_LOCAL = 254, 255
RTPROT_BOOT = 3  # what `ip route add` sets
RT_SCOPE_UNIVERSE, RT_SCOPE_LINK, RT_SCOPE_HOST = 0, 253, 254
RTN_UNICAST, RTN_LOCAL = 1, 2
TCA_KIND = 1
AF_BRIDGE = 7
NUD_PERMANENT = 0x80  #: a static neighbour: never garbage-collected (dynamic ones are, table-wide)
#: the ingress hook's filter parents (ffff:fff2, ffff:fff3), used by both ingress and clsact qdiscs
TC_H_INGRESS_PARENTS = (0xFFFFFFF2, 0xFFFFFFF3)

HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port
IFINFO = struct.Struct("=BxHiII")  # ifinfomsg: family, type, index, flags, change
IFADDR = struct.Struct("=BBBBi")  # ifaddrmsg: family, prefix length, flags, scope, ifindex
RTMSG = struct.Struct("=BBBBBBBBI")  # rtmsg: family, dst len, src len, tos, table, protocol, scope, type, flags
TCMSG = struct.Struct("=BxxxiIII")  # tcmsg: family, ifindex, handle, parent, info
STATS = struct.Struct("=BxxxiI")  # if_stats_msg: family, ifindex, filter mask
NDMSG = struct.Struct("=BBHiHBB")  # ndmsg: family, pads, ifindex, state, flags, type
_ATTR = struct.Struct("=HH")  # rtattr: length, type


def attribute(kind: int, value: bytes) -> bytes:
    """One attribute, padded to four bytes."""
    data = _ATTR.pack(_ATTR.size + len(value), kind) + value
    return data + b"\0" * (-len(data) % 4)


def u32(kind: int, value: int) -> bytes:
    return attribute(kind, struct.pack("=I", value))


def ipv4(kind: int, address: str) -> bytes:
    return attribute(kind, socket.inet_aton(address))


def name(kind: int, value: str) -> bytes:
    return attribute(kind, value.encode() + b"\0")


def attributes(data: bytes, offset: int) -> Iterator[tuple[int, bytes]]:
    """(type, value) of every attribute in data from offset on (the nested and byte-order flags cleared)."""
    while offset + _ATTR.size <= len(data):
        length, kind = _ATTR.unpack_from(data, offset)
        if length < _ATTR.size:
            return
        yield kind & 0x3FFF, data[offset + _ATTR.size: offset + length]
        offset += (length + 3) & ~3


def text(value: bytes) -> str:
    """A string attribute's text (up to its NUL)."""
    return value.split(b"\0", 1)[0].decode(errors="replace")


def packets(stats64: bytes) -> int:
    """The packets a link has sent, from its IFLA_STATS64 attribute. Every frame that moves is sent by some link, so
    sent packets count each hop once; and a veth's received counts are its peer's sent ones, which it no longer
    reports in the notification of its deletion (its peer is gone by then)."""
    return int(struct.unpack_from("=QQ", stats64)[1])


def static_neighbour(payload: bytes) -> bool:
    """Whether a neighbour message is of an entry that stays until removed: a static neighbour or a bridge's entry
    (not one the kernel learnt by itself)."""
    if len(payload) < NDMSG.size:
        return False
    family, _, _, _, state, _, _ = NDMSG.unpack_from(payload)
    return family == AF_BRIDGE or bool(state & NUD_PERMANENT)


def messages(data: bytes) -> Iterator[tuple[int, int, bytes]]:
    """(type, sequence, payload) of every message in one datagram the kernel sent."""
    offset = 0
    while offset + HEADER.size <= len(data):
        length, kind, _, sequence, _ = HEADER.unpack_from(data, offset)
        if length < HEADER.size:
            return
        yield kind, sequence, data[offset + HEADER.size: offset + length]
        offset += (length + 3) & ~3
