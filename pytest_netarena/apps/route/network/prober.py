"""The pingmesh: every ordered pair of nodes probed at once, each answer proven to come from the destination itself.

Each node gets one raw ICMP socket created inside its network namespace (setns in a helper
thread; a socket keeps the namespace it was created in) and held by the harness, outside any
agent box: the agent's uid and PID namespace can neither signal nor replace it. A whole mesh is
a burst of sendto() calls and one poll loop in this process: no process per pair.

A pair (src, dst) counts as reachable only when both answers reach src:
- the destination kernel's echo reply (what Mininet's pingAll sees), and
- the harness's own reply, sent from dst's socket (the responder) only when the probe, carrying a
  random nonce, arrived in dst's namespace; it carries a random token of that probe that leaves
  this process only in that answer (and the destination's name), so nothing in the network can forge it.
An address of dst faked on another node's `lo`, a DNAT or proxy-ARP trick that answers locally, or
a probe reflected back to its sender gets the kernel's echo but never the responder's token.
Probes carry 512 bytes with don't-fragment set in both directions, so a link whose MTU is too
small fails. Missing answers are re-probed before a pair counts as unreachable, and a round lasts
while answers keep coming, so a loaded machine does not turn a reachable pair into a false safety
violation.
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ....sandbox import NetNamespace

IP_MTU_DISCOVER = 10
IP_PMTUDISC_DO = 2
#: ICMP payload bytes; with the IP and ICMP headers a probe is 512 bytes on the wire
PAYLOAD = 484
PROBE_BYTES = PAYLOAD + 28
_ECHO_REQUEST, _ECHO_REPLY = 8, 0
#: first payload bytes of a probe and of a responder's answer
PROBE_MAGIC, ANSWER_MAGIC = b"naQ1", b"naA1"
NONCE_BYTES, TOKEN_BYTES = 8, 16
#: reply waits of the rounds every missing pair gets, then of the rounds only previously reachable pairs get
FIRST_ROUNDS_S = (0.1, 0.1)
RETRY_ROUNDS_S = (0.25, 0.5)
ROUNDS_S = FIRST_ROUNDS_S + RETRY_ROUNDS_S
#: answers keep a round open for at most this many times its reply wait ...
ROUND_LIMIT = 5
#: ... then it reads what already queued this many more times (a probe, its answer, the kernel's echo)
LATE_PASSES = 3
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


def _socket_in_namespace(pid: int) -> socket.socket:
    """A raw ICMP socket created in the network namespace of process pid."""
    namespace = NetNamespace.of_process(pid)
    try:
        sock = namespace.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    finally:
        namespace.close()
    sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    # a raw socket also gets a copy of every echo request sent to its node: room for big meshes
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
    sock.setblocking(False)
    return sock


def _fold(total: int) -> int:
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


class Prober:
    """Probes a network's pingmesh; one socket per node (sender and responder), kept for the whole episode."""

    def __init__(self, pids: Mapping[str, int], addresses: Mapping[str, str], nodes: Sequence[str]) -> None:
        self.nodes = tuple(nodes)
        self.addresses = dict(addresses)
        self._packed = {node: socket.inet_aton(address) for node, address in self.addresses.items()}
        self.sockets = {node: _socket_in_namespace(pids[node]) for node in self.nodes}
        self._round = int.from_bytes(os.urandom(2), "big")
        #: probes that arrived in a namespace other than their destination's in the last measure (src, dst, where)
        self.diverted: set[tuple[str, str, str]] = set()
        self._signatures: dict[str, _Filler] = {}

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
        self.diverted = set()
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
        # ident: 6 bits of round, 10 bits of source index; seq: destination index; the nonce proves the rest.
        # Each probe's token is random and leaves this process only in the destination responder's answer.
        nonces = os.urandom(NONCE_BYTES * len(pairs))
        tokens = os.urandom(TOKEN_BYTES * len(pairs))
        probes: dict[bytes, _Probe] = {}
        by_fd = {sock.fileno(): node for node, sock in self.sockets.items()}
        for number, (src, dst) in enumerate(pairs):
            nonce = nonces[number * NONCE_BYTES:(number + 1) * NONCE_BYTES]
            probes[nonce] = _Probe(src, dst, tokens[number * TOKEN_BYTES:(number + 1) * TOKEN_BYTES])
            ident = (self._round << 10) | index[src]
            try:
                self.sockets[src].sendto(_packet(_ECHO_REQUEST, ident, index[dst], PROBE_MAGIC + nonce, _FILLER),
                                         (self.addresses[dst], 0))
            except OSError:
                pass  # unreachable network, or an OUTPUT rule: the pair simply does not answer
        reached: set[tuple[str, str]] = set()
        poller = select.poll()
        for fd in by_fd:
            poller.register(fd, select.POLLIN)
        # The round ends once timeout_s passes without an answer to one of its probes, and answers keep
        # it open only until ROUND_LIMIT times timeout_s. Past its end, what already queued is still read
        # (a few passes, without waiting): this process is the responder, and on a loaded machine it may
        # have been descheduled while the answers queued.
        started = time.perf_counter()
        deadline, limit = started + timeout_s, started + ROUND_LIMIT * timeout_s
        late_passes = 0
        while len(reached) < len(pairs):
            ready = poller.poll(max(min(deadline, limit) - time.perf_counter(), 0) * 1000)
            answers = sum(self._drain(by_fd[fd], probes, reached) for fd, _ in ready)
            now = time.perf_counter()
            if answers and now < limit:
                deadline = max(deadline, now + timeout_s)
            elif now >= min(deadline, limit):
                if not answers or late_passes == LATE_PASSES:
                    break
                late_passes += 1
        return reached

    def _drain(self, node: str, probes: dict[bytes, _Probe], reached: set[tuple[str, str]]) -> int:
        """Read everything node's socket holds: answer probes meant for node, record answers to node's probes.
        Returns how many packets belonged to this round's probes."""
        sock = self.sockets[node]
        start, end = len(PROBE_MAGIC), len(PROBE_MAGIC) + NONCE_BYTES
        ours = 0
        while True:
            try:
                packet = sock.recv(2048)
            except OSError:  # BlockingIOError: drained
                return ours
            header_len = (packet[0] & 0x0F) * 4
            if len(packet) < header_len + 8 + end + TOKEN_BYTES:
                continue
            kind, _code, _sum, ident, seq = _ICMP_HEADER.unpack_from(packet, header_len)
            payload = header_len + 8
            nonce = packet[payload + start:payload + end]
            probe = probes.get(nonce)
            if probe is None:
                continue
            ours += 1
            magic = packet[payload:payload + start]
            if kind == _ECHO_REQUEST and magic == PROBE_MAGIC:
                if node != probe.dst:
                    self.diverted.add((probe.src, probe.dst, node))  # answered locally or redirected: never vouched for
                    continue
                answer = _packet(_ECHO_REPLY, ident, seq, ANSWER_MAGIC + nonce + probe.token, self._signature(node))
                try:
                    sock.sendto(answer, (socket.inet_ntoa(packet[12:16]), 0))
                except OSError:
                    pass  # no route back: the pair does not answer
            elif kind == _ECHO_REPLY and node == probe.src:
                if magic == PROBE_MAGIC:
                    if packet[12:16] == self._packed[probe.dst]:
                        probe.echoed = True
                elif magic == ANSWER_MAGIC and packet[payload + end:payload + end + TOKEN_BYTES] == probe.token:
                    probe.answered = True
                if probe.echoed and probe.answered:
                    reached.add((probe.src, probe.dst))

    def _signature(self, node: str) -> _Filler:
        """The rest of node's answers: its name, then filler up to the probe size (checksum precomputed)."""
        filler = self._signatures.get(node)
        if filler is None:
            filler = self._signatures[node] = _Filler.of(node.encode()[:64], PAYLOAD - HEAD_BYTES)
        return filler


@dataclass
class _Probe:
    """One probe in flight: its pair, the token only the destination's responder sends back, what came back."""

    src: str
    dst: str
    token: bytes
    echoed: bool = False  #: the destination kernel's echo reply arrived (as ping sees it)
    answered: bool = False  #: the destination responder's answer, with the token, arrived


@dataclass(frozen=True)
class _Filler:
    """The fixed tail of a packet's payload and the sum of its 16-bit words (tails start at an even offset)."""

    data: bytes
    words: int

    @classmethod
    def of(cls, head: bytes, size: int) -> _Filler:
        data = (head + bytes(range(256)) * (size // 256 + 1))[:size]
        return cls(data, sum(struct.unpack(f"!{size // 2}H", data)))


#: what precedes the fixed tail of every payload: magic, nonce and (answers) token, or magic, nonce, zeros (probes)
HEAD_BYTES = len(PROBE_MAGIC) + NONCE_BYTES + TOKEN_BYTES
_FILLER = _Filler.of(b"", PAYLOAD - len(PROBE_MAGIC) - NONCE_BYTES)


_HEAD_WORDS = {size: struct.Struct(f"!{size // 2}H") for size in (len(PROBE_MAGIC) + NONCE_BYTES, HEAD_BYTES)}
_ICMP_HEADER = struct.Struct("!BBHHH")


def _packet(kind: int, ident: int, seq: int, head: bytes, tail: _Filler) -> bytes:
    """An ICMP echo message: header, then head (even length), then the tail, with its checksum."""
    words = (kind << 8) + ident + seq + tail.words + sum(_HEAD_WORDS[len(head)].unpack(head))
    checksum = ~_fold(words) & 0xFFFF
    return _ICMP_HEADER.pack(kind, 0, checksum, ident, seq) + head + tail.data
