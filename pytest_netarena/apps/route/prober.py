"""The pingmesh: every ordered pair of nodes probed at once from one raw ICMP socket per source node.

Each source node gets one raw ICMP socket created inside its network namespace (setns in a helper
thread; a socket keeps the namespace it was created in), so a whole mesh is a burst of sendto()
calls and one poll loop in this process: no process per pair, no process per probe. Probes carry
a payload with the don't-fragment bit set, so a link whose MTU is too small to carry them fails.
Missing answers are re-probed before a pair counts as unreachable, so a loaded machine does not
turn a reachable pair into a false safety violation.
"""

from __future__ import annotations

import ctypes
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000
IP_MTU_DISCOVER = 10
IP_PMTUDISC_DO = 2
#: ICMP payload bytes; with the IP and ICMP headers a probe is 512 bytes on the wire
PAYLOAD = 484
PROBE_BYTES = PAYLOAD + 28
_ECHO_REQUEST, _ECHO_REPLY = 8, 0
#: reply waits of the rounds every missing pair gets, then of the rounds only previously reachable pairs get
FIRST_ROUNDS_S = (0.1, 0.1)
RETRY_ROUNDS_S = (0.25, 0.5)
ROUNDS_S = FIRST_ROUNDS_S + RETRY_ROUNDS_S
#: meshes with more nodes than this are rendered in a compact form
COMPACT_ABOVE = 40
SO_RCVBUFFORCE = 33
RECEIVE_BUFFER = 4 << 20


@dataclass(frozen=True)
class Mesh:
    """One pingmesh: which ordered pairs (src, dst) answered, over a fixed node order."""

    nodes: tuple[str, ...]
    reachable: frozenset[tuple[str, str]]
    seconds: float = 0.0

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(src, dst) for src in self.nodes for dst in self.nodes if src != dst]

    @property
    def unreachable(self) -> list[tuple[str, str]]:
        return [pair for pair in self.pairs if pair not in self.reachable]

    @property
    def complete(self) -> bool:
        return not self.unreachable

    def render(self) -> str:
        """Mininet's pingAll format: '<src> -> <dst or X> ...' then the drop summary.

        Above COMPACT_ABOVE nodes a row lists only what failed ('<src> -> all', '<src> -> all except
        h3 r0'), so a 32x8 mesh stays readable instead of 66,000 names long.
        """
        compact = len(self.nodes) > COMPACT_ABOVE
        lines = ["*** Ping: testing ping reachability"]
        if compact:
            lines.append("(compact form for a large network: each row names only the destinations that did not answer)")
        for src in self.nodes:
            others = [dst for dst in self.nodes if dst != src]
            if compact:
                failed = [dst for dst in others if (src, dst) not in self.reachable]
                row = "all" if not failed else "none" if len(failed) == len(others) else "all except " + " ".join(failed)
            else:
                row = " ".join(dst if (src, dst) in self.reachable else "X" for dst in others)
            lines.append(f"{src} -> {row}")
        sent = len(self.pairs)
        received = sent - len(self.unreachable)
        loss = (sent - received) * 100 // sent if sent else 0
        lines.append(f"*** Results: {loss}% dropped ({received}/{sent} received)")
        return "\n".join(lines)


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setns.argtypes = (ctypes.c_int, ctypes.c_int)
    return libc


def _socket_in_namespace(pid: int) -> socket.socket:
    """A raw ICMP socket created in the network namespace of process pid."""
    box: dict[str, object] = {}

    def target() -> None:
        libc = _libc()
        home = os.open(f"/proc/self/task/{threading.get_native_id()}/ns/net", os.O_RDONLY)
        try:
            target_ns = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            try:
                if libc.setns(target_ns, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns into the namespace of pid {pid}")
                try:
                    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                finally:
                    if libc.setns(home, CLONE_NEWNET) != 0:  # the thread ends anyway; be tidy
                        pass
            finally:
                os.close(target_ns)
        finally:
            os.close(home)
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        # a raw socket also gets a copy of every echo request sent to its node: room for big meshes
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
        sock.setblocking(False)
        box["socket"] = sock

    def guarded() -> None:
        try:
            target()
        except BaseException as error:  # noqa: BLE001  # re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=guarded, name="netarena-setns")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["socket"]  # type: ignore[return-value]


def _fold(total: int) -> int:
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


_PAYLOAD_BYTES = bytes(range(256)) * (PAYLOAD // 256) + bytes(range(PAYLOAD % 256))
_PAYLOAD_SUM = sum(struct.unpack(f"!{PAYLOAD // 2}H", _PAYLOAD_BYTES))


def _echo(ident: int, seq: int) -> bytes:
    checksum = ~_fold((_ECHO_REQUEST << 8) + ident + seq + _PAYLOAD_SUM) & 0xFFFF
    return struct.pack("!BBHHH", _ECHO_REQUEST, 0, checksum, ident, seq) + _PAYLOAD_BYTES


class Prober:
    """Probes a network's pingmesh; one socket per source node, kept for the whole episode."""

    def __init__(self, pids: Mapping[str, int], addresses: Mapping[str, str], nodes: Sequence[str]) -> None:
        self.nodes = tuple(nodes)
        self.addresses = dict(addresses)
        self.sockets = {node: _socket_in_namespace(pids[node]) for node in self.nodes}
        self._round = int.from_bytes(os.urandom(2), "big")

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets = {}

    def measure(self, previous: frozenset[tuple[str, str]] | None = None) -> Mesh:
        """Probe every ordered pair: two short rounds for all pairs, then longer rounds only for pairs
        that answered in `previous` (possible safety violations), so a broken network stays cheap."""
        started = time.perf_counter()
        index = {node: i for i, node in enumerate(self.nodes)}
        reached: set[tuple[str, str]] = set()
        pending = [(s, d) for s in self.nodes for d in self.nodes if s != d]
        for number, timeout_s in enumerate(ROUNDS_S):
            if number == len(ROUNDS_S) - len(RETRY_ROUNDS_S) and previous is not None:
                pending = [pair for pair in pending if pair in previous]
            elif number == len(ROUNDS_S) - len(RETRY_ROUNDS_S):
                break
            if not pending:
                break
            self._round = (self._round + 1) & 0x3F
            reached |= self._probe(pending, index, timeout_s)
            pending = [pair for pair in pending if pair not in reached]
        return Mesh(self.nodes, frozenset(reached), time.perf_counter() - started)

    def _probe(self, pairs: list[tuple[str, str]], index: dict[str, int], timeout_s: float) -> set[tuple[str, str]]:
        # ident: 6 bits of round, 10 bits of source index; seq: destination index
        expected: dict[tuple[int, int, int], tuple[str, str]] = {}
        by_fd = {sock.fileno(): node for node, sock in self.sockets.items()}
        for src, dst in pairs:
            ident = (self._round << 10) | index[src]
            seq = index[dst]
            expected[(index[src], ident, seq)] = (src, dst)
            try:
                self.sockets[src].sendto(_echo(ident, seq), (self.addresses[dst], 0))
            except OSError:
                pass  # unreachable network, or an OUTPUT rule: the pair simply does not answer
        reached: set[tuple[str, str]] = set()
        poller = select.poll()
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        deadline = time.perf_counter() + timeout_s
        while len(reached) < len(expected):
            left = deadline - time.perf_counter()
            if left <= 0:
                break
            for fd, _ in poller.poll(left * 1000):
                src = by_fd[fd]
                sock = self.sockets[src]
                while True:
                    try:
                        packet = sock.recv(2048)
                    except BlockingIOError:
                        break
                    except OSError:
                        break
                    header_len = (packet[0] & 0x0F) * 4
                    if len(packet) < header_len + 8:
                        continue
                    kind, _code, _sum, ident, seq = struct.unpack_from("!BBHHH", packet, header_len)
                    if kind != _ECHO_REPLY:
                        continue
                    pair = expected.get((index[src], ident, seq))
                    if pair is not None and socket.inet_ntoa(packet[12:16]) == self.addresses[pair[1]]:
                        reached.add(pair)
        return reached
