"""A small rtnetlink client living in one network namespace: make veth pairs and dummies, set links up, add addresses and routes.

Every call is one netlink request on a socket the harness holds inside the namespace: no `ip` process per
step, so a pod's network costs a few hundred microseconds.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct

from ..sandbox import NetNamespace

NETLINK_ROUTE = 0
RTM_NEWLINK, RTM_DELLINK = 16, 17
RTM_NEWADDR = 20
RTM_NEWROUTE = 24
NLM_F_REQUEST, NLM_F_ACK, NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = 0x1, 0x4, 0x100, 0x200, 0x400
NLMSG_ERROR = 2
IFLA_IFNAME, IFLA_LINKINFO, IFLA_NET_NS_FD = 3, 18, 28
IFLA_INFO_KIND, IFLA_INFO_DATA = 1, 2
VETH_INFO_PEER = 1
IFA_LOCAL, IFA_ADDRESS = 2, 1
RTA_DST, RTA_OIF, RTA_GATEWAY = 1, 4, 5
IFF_UP = 0x1
RT_TABLE_MAIN, RT_TABLE_LOCAL, RTPROT_STATIC = 254, 255, 4
RT_SCOPE_UNIVERSE, RT_SCOPE_LINK, RT_SCOPE_HOST = 0, 253, 254
RTN_UNICAST, RTN_LOCAL = 1, 2

_HEADER = struct.Struct("=IHHII")
_IFINFO = struct.Struct("=BxHiII")
_IFADDR = struct.Struct("=BBBBI")
_RTMSG = struct.Struct("=BBBBBBBBI")


def open_socket() -> socket.socket:
    """A bound NETLINK_ROUTE socket in the calling thread's namespace."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    sock.bind((0, 0))
    return sock


def _attr(kind: int, value: bytes) -> bytes:
    data = struct.pack("=HH", 4 + len(value), kind) + value
    return data + b"\0" * (-len(data) % 4)


def _name(text: str) -> bytes:
    return text.encode() + b"\0"


class Netlink:
    """One NETLINK_ROUTE socket inside a network namespace (created there, it stays there)."""

    def __init__(self, namespace: NetNamespace | None = None, sock: socket.socket | None = None) -> None:
        """A socket made in namespace, or `sock` (one made by `open_socket` in a thread inside it)."""
        self.sock = sock if sock is not None else namespace.call(open_socket)
        self._sequence = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Netlink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, kind: int, flags: int, body: bytes) -> None:
        """Send one request and wait for its acknowledgement (OSError on a refusal)."""
        self._sequence += 1
        sequence = self._sequence
        self.sock.send(_HEADER.pack(_HEADER.size + len(body), kind, NLM_F_REQUEST | NLM_F_ACK | flags, sequence, 0)
                       + body)
        while True:
            data = self.sock.recv(65536)
            offset = 0
            while offset + _HEADER.size <= len(data):
                length, answer, _, answered, _ = _HEADER.unpack_from(data, offset)
                payload = data[offset + _HEADER.size: offset + length]
                offset += (length + 3) & ~3
                if answered == sequence and answer == NLMSG_ERROR:
                    code = -struct.unpack_from("=i", payload)[0]
                    if code:
                        raise OSError(code, f"netlink: {os.strerror(code)}")
                    return

    def add_veth(self, name: str, peer: str, peer_namespace: NetNamespace) -> None:
        """A veth pair: `name` here, `peer` created directly inside peer_namespace."""
        peer_info = _IFINFO.pack(0, 0, 0, 0, 0) + _attr(IFLA_IFNAME, _name(peer)) + _attr(
            IFLA_NET_NS_FD, struct.pack("=I", peer_namespace.fd))
        info = _attr(IFLA_INFO_KIND, b"veth") + _attr(IFLA_INFO_DATA, _attr(VETH_INFO_PEER, peer_info))
        body = _IFINFO.pack(0, 0, 0, 0, 0) + _attr(IFLA_IFNAME, _name(name)) + _attr(IFLA_LINKINFO, info)
        self._call(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, body)

    def index(self, name: str) -> int:
        return socket_if_index(self, name)

    def delete_link(self, index: int) -> None:
        """Delete a link (a veth takes its peer along)."""
        self._call(RTM_DELLINK, 0, _IFINFO.pack(0, 0, index, 0, 0))

    def set_up(self, index: int) -> None:
        self._call(RTM_NEWLINK, 0, _IFINFO.pack(0, 0, index, IFF_UP, IFF_UP))

    def add_address(self, index: int, address: str, prefix: int = 32) -> None:
        packed = ipaddress.IPv4Address(address).packed
        body = _IFADDR.pack(socket.AF_INET, prefix, 0, RT_SCOPE_UNIVERSE, index) + _attr(IFA_LOCAL, packed) + _attr(
            IFA_ADDRESS, packed)
        self._call(RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, body)

    def add_route(self, destination: str, prefix: int, index: int, gateway: str | None = None,
                  local: bool = False) -> None:
        """destination/prefix through link `index` (directly, scope link; or via gateway); local: a range of
        addresses delivered to this namespace itself (`ip route add local ...`)."""
        scope = RT_SCOPE_HOST if local else RT_SCOPE_UNIVERSE if gateway else RT_SCOPE_LINK
        table, kind = (RT_TABLE_LOCAL, RTN_LOCAL) if local else (RT_TABLE_MAIN, RTN_UNICAST)
        body = _RTMSG.pack(socket.AF_INET, prefix, 0, 0, table, RTPROT_STATIC, scope, kind, 0)
        if prefix:
            body += _attr(RTA_DST, ipaddress.IPv4Address(destination).packed)
        body += _attr(RTA_OIF, struct.pack("=i", index))
        if gateway:
            body += _attr(RTA_GATEWAY, ipaddress.IPv4Address(gateway).packed)
        self._call(RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, body)  # a pod gone before may have left its route


def socket_if_index(link: Netlink, name: str) -> int:
    """The index of interface `name` in the netlink socket's namespace (if_nametoindex asks the caller's)."""
    import fcntl

    request = struct.pack("16si12x", name.encode(), 0)
    SIOCGIFINDEX = 0x8933
    answer = fcntl.ioctl(link.sock.fileno(), SIOCGIFINDEX, request)
    return struct.unpack("16si12x", answer)[1]
