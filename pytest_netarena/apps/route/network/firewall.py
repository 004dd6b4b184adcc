"""How many firewall entries the legacy iptables tables of one namespace hold, asked of the kernel.

iptables-legacy replaces a whole table at once and the kernel sends no notification of it, so its entries are
counted the way iptables-save reads them: IPT_SO_GET_INFO (and IP6T_SO_GET_INFO) on a raw socket of the harness
inside the namespace, for the tables the namespace has (/proc/<pid>/net/ip_tables_names). The nftables backend
is counted from its notifications instead (monitor.py).
"""

from __future__ import annotations

import ctypes
import socket
import struct

from ....sandbox import NetNamespace

SOL_IP, SOL_IPV6, SO_GET_INFO = 0, 41, 64
#: struct ipt_getinfo (ip6t_getinfo alike): name[32], valid_hooks, hook_entry[5], underflow[5], num_entries, size
_INFO = struct.Struct("=32sI5I5III")


class LegacyTables:
    """The legacy (x_tables) firewall of one namespace."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        namespace = NetNamespace.of_process(pid)
        try:
            self.sockets = {
                family: namespace.call(lambda family=family: socket.socket(family, socket.SOCK_RAW, socket.IPPROTO_RAW))
                for family in (socket.AF_INET, socket.AF_INET6)}
        finally:
            namespace.close()
        self._getsockopt = ctypes.CDLL(None, use_errno=True).getsockopt

    def entries(self) -> int:
        """Entries (rules, chain heads and policies) of every legacy table, IPv4 and IPv6."""
        total = 0
        for family, names, level in ((socket.AF_INET, "ip_tables_names", SOL_IP),
                                     (socket.AF_INET6, "ip6_tables_names", SOL_IPV6)):
            try:
                with open(f"/proc/{self.pid}/net/{names}") as listed:
                    tables = listed.read().split()
            except OSError:
                continue
            for table in tables:
                total += self._entries(self.sockets[family], level, table)
        return total

    def _entries(self, sock: socket.socket, level: int, table: str) -> int:
        buffer = ctypes.create_string_buffer(_INFO.pack(table.encode()[:31], 0, *[0] * 10, 0, 0), _INFO.size)
        length = ctypes.c_uint(_INFO.size)
        if self._getsockopt(sock.fileno(), level, SO_GET_INFO, buffer, ctypes.byref(length)) != 0:
            return 0  # the table went away meanwhile
        return _INFO.unpack(buffer.raw)[12]

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
