"""How many firewall entries the legacy iptables tables of one namespace hold, and what they say, asked of the kernel.

iptables-legacy replaces a whole table at once and the kernel sends no notification of it, so its entries are
counted the way iptables-save reads them: IPT_SO_GET_INFO (and IP6T_SO_GET_INFO) on a raw socket of the harness
inside the namespace, for the tables the namespace has (/proc/<pid>/net/ip_tables_names); and a change to its IPv4
rules or policies is seen by comparing the tables' entries (IPT_SO_GET_ENTRIES) without their packet counters. The
nftables backend is counted from its notifications instead (monitor.py).
"""

from __future__ import annotations

import ctypes
import socket
import struct

from ....sandbox import NetNamespace

SOL_IP, SOL_IPV6, SO_GET_INFO, SO_GET_ENTRIES = 0, 41, 64, 65
#: struct ipt_getinfo (ip6t_getinfo alike): name[32], valid_hooks, hook_entry[5], underflow[5], num_entries, size
_INFO = struct.Struct("=32sI5I5III")
#: struct ipt_get_entries: name[32], size, then the entries (8-byte aligned)
_ENTRIES_HEAD = 40
#: in struct ipt_entry: where next_offset is, and where its counters (two u64) are
_NEXT_OFFSET, _COUNTERS = 90, 96


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
        info = self._info(sock, level, table)
        return info[12] if info else 0  # 0: the table went away meanwhile

    def _info(self, sock: socket.socket, level: int, table: str) -> tuple | None:
        buffer = ctypes.create_string_buffer(_INFO.pack(table.encode()[:31], 0, *[0] * 10, 0, 0), _INFO.size)
        length = ctypes.c_uint(_INFO.size)
        if self._getsockopt(sock.fileno(), level, SO_GET_INFO, buffer, ctypes.byref(length)) != 0:
            return None
        return _INFO.unpack(buffer.raw)

    def fingerprint(self) -> bytes:
        """What the IPv4 legacy tables say (every entry, hook and policy), without the packet counters that change
        with traffic: equal fingerprints, same rules."""
        try:
            with open(f"/proc/{self.pid}/net/ip_tables_names") as listed:
                tables = sorted(listed.read().split())
        except OSError:
            return b""
        parts = []
        for table in tables:
            info = self._info(self.sockets[socket.AF_INET], SOL_IP, table)
            if info is None:
                continue
            size = info[13]
            buffer = ctypes.create_string_buffer(table.encode()[:31].ljust(32, b"\0") + struct.pack("=I", size),
                                                 _ENTRIES_HEAD + size)
            length = ctypes.c_uint(_ENTRIES_HEAD + size)
            if self._getsockopt(self.sockets[socket.AF_INET].fileno(), SOL_IP, SO_GET_ENTRIES, buffer,
                                ctypes.byref(length)) != 0:
                parts.append(table.encode() + b"?")  # replaced between the two questions: ask again next time
                continue
            entries = bytearray(buffer.raw[_ENTRIES_HEAD:_ENTRIES_HEAD + size])
            offset = 0
            while offset + _COUNTERS + 16 <= len(entries):
                entries[offset + _COUNTERS:offset + _COUNTERS + 16] = bytes(16)
                step = struct.unpack_from("=H", entries, offset + _NEXT_OFFSET)[0]
                if step <= 0:
                    break
                offset += step
            parts.append(table.encode() + b"\0" + struct.pack("=11I", *info[1:12]) + bytes(entries))
        return b"\0\0".join(parts)

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
