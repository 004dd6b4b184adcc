"""One round of the pingmesh: a probe per pair and protocol, the destinations' responders, and the answers read back.

Every probe carries a random nonce; its token is random too and leaves this process only in the answer the
destination's responder sends, which it sends only when the probe arrived in the destination's own namespace:
- ICMP: an echo request from the source's raw socket; the pair needs both the destination kernel's echo reply
  (what Mininet's pingAll sees) and the responder's answer from the destination's raw socket;
- UDP: a datagram from the source's own socket (an ephemeral port, as any client's) to the destination's UDP
  responder (a port drawn for this measure), answered from it: the answer is a reply of the probe's flow, and the
  probe of the opposite direction a flow of its own, as a stateful firewall sees real traffic;
- TCP: a new connection to the destination's listener (a port drawn for this measure) carrying the nonce, answered
  over it; a window of connections is open at once, so a big mesh needs no more sockets than the window.
A probe that arrives in another namespace (an address faked on `lo`, a DNAT or proxy-ARP trick, a reflection) is
recorded as diverted and never answered. A definite failure (network or host unreachable, a refusal, a firewall of
the sender, a path MTU too small) is recorded as the pair's error, as against a probe that got no answer.

A probe waits `timeout_s` after it was sent, or after the round's last answer, whichever is later, at most
ROUND_LIMIT times `timeout_s`; answers that queued while this process was descheduled are read before a probe is
given up, so a loaded machine does not turn a reachable pair into a lost one.
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from . import icmp
from .descriptors import high_socket

#: answers keep a round open for at most this many times its reply wait ...
ROUND_LIMIT = 5
#: ... then it reads what already queued this many more times (a probe, its answer, the kernel's echo)
LATE_PASSES = 3
#: errors that say the network refused the probe (as against a probe that got no answer)
DEFINITE = {errno.ENETUNREACH: "network unreachable", errno.EHOSTUNREACH: "host unreachable",
            errno.ECONNREFUSED: "refused", errno.EPERM: "blocked by a firewall of the sender",
            errno.EACCES: "blocked by a firewall of the sender", errno.EMSGSIZE: "the path's MTU is too small",
            errno.ENOPROTOOPT: "protocol unreachable"}
_LINGER_RESET = struct.pack("ii", 1, 0)  # close() sends a reset: no TIME_WAIT per probe
IP_PKTINFO = 8
_PKTINFO = struct.Struct("=i4s4s")  # struct in_pktinfo: interface, local address, header destination


def from_address(local: bytes) -> list[tuple[int, int, bytes]]:
    """The ancillary data that sends a packet from `local` (an address of the node): an answer leaves from the
    address it was probed at, as a reply of the probe's flow, whichever interface routing picks."""
    return [(socket.IPPROTO_IP, IP_PKTINFO, _PKTINFO.pack(0, local, bytes(4)))]
_IN, _OUT, _ERR = select.EPOLLIN, select.EPOLLOUT, select.EPOLLERR | select.EPOLLHUP


#: packets one probe may put on the network, by protocol: the most (granted as it is sent), then by whether it was
#: answered (its answer and the kernel's echo; a TCP handshake, nonce, answer, an ACK of its own and a reset from
#: each end; else an error or retransmitted SYNs). Each crosses at most HOPS counted links (meter.py): measured on
#: 8x4 with every node counted, a healthy mesh made 0.86 of it, broken ones 0.24-0.72
MOST = {"icmp": 3, "udp": 2, "tcp": 9}
ANSWERED = MOST
UNANSWERED = {"icmp": 2, "udp": 2, "tcp": 4}
HOPS = 4


class Interrupt:
    """A stop for a measure that wakes its poll at once: set() from another thread."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._set = threading.Event()

    def set(self) -> None:
        self._set.set()
        try:
            os.write(self._write, b"x")
        except OSError:
            pass  # already woken

    def is_set(self) -> bool:
        return self._set.is_set()

    def fileno(self) -> int:
        return self._read

    def close(self) -> None:
        os.close(self._read)
        os.close(self._write)


@dataclass
class ProbeInFlight:
    """One probe in flight: its pair and protocol, the token only the destination's responder sends back, what came
    back."""

    src: str
    dst: str
    protocol: str
    token: bytes
    sent_at: float = 0.0
    echoed: bool = False  #: ICMP: the destination kernel's echo reply arrived (as ping sees it)
    answered: bool = False  #: the destination responder's answer, with the token, arrived
    error: str = ""  #: a definite failure
    done: bool = False
    sock: socket.socket | None = None  #: TCP: the source's connection
    connected: bool = False  #: TCP: the connection is up and the nonce sent
    received: bytes = b""

    @property
    def passed(self) -> bool:
        return self.answered and (self.echoed or self.protocol != "icmp")


@dataclass
class Endpoints:
    """Everything a round sends from and answers with: per node its raw ICMP socket (the episode's), its UDP sender,
    UDP responder and TCP listener (this measure's, the last two on the ports drawn for it), its address and where
    it lives."""

    addresses: Mapping[str, str]
    index: Mapping[str, int]
    raw: Mapping[str, socket.socket]
    udp_out: Mapping[str, socket.socket]
    udp: Mapping[str, socket.socket]
    listeners: Mapping[str, socket.socket]
    udp_port: int
    tcp_port: int
    make_sockets: Callable[[dict[str, int]], dict[str, list[socket.socket]]]  #: TCP sockets made in each node
    signature: Callable[[str], icmp.Filler]  #: the rest of a node's answers
    tcp_window: int


class Round:
    """One round: add() the probes, then run() sends them and waits for their answers."""

    def __init__(self, ends: Endpoints, epoll: select.epoll, round_id: int, timeout_s: float,
                 stop: Interrupt | None = None) -> None:
        self.ends, self.epoll, self.round_id, self.timeout_s, self.stop = ends, epoll, round_id, timeout_s, stop
        self.granted = 0  #: packets the probes sent so far may put on the network (MOST each)
        self.probes: dict[bytes, ProbeInFlight] = {}
        self.diverted: set[tuple[str, str, str]] = set()
        self._icmp: list[tuple[bytes, ProbeInFlight]] = []
        self._udp: list[tuple[bytes, ProbeInFlight]] = []
        self._tcp: deque[tuple[bytes, ProbeInFlight]] = deque()
        self._open = 0
        self._sent: deque[ProbeInFlight] = deque()  #: in the order sent, so the oldest open probe is first
        self._clients: dict[int, tuple[bytes, ProbeInFlight]] = {}
        self._accepted: dict[int, tuple[str, socket.socket, bytes]] = {}
        self._handlers: dict[int, Callable[[int, int], int]] = {}
        for node, sock in ends.raw.items():
            self._handlers[sock.fileno()] = lambda fd, events, node=node: self._drain_icmp(node)
        for node, sock in ends.udp.items():
            self._handlers[sock.fileno()] = lambda fd, events, node=node: self._respond_udp(node)
        for node, sock in ends.udp_out.items():
            self._handlers[sock.fileno()] = lambda fd, events, node=node: self._answers_udp(node)
        for node, sock in ends.listeners.items():
            self._handlers[sock.fileno()] = lambda fd, events, node=node: self._accept(node)

    def add(self, src: str, dst: str, protocol: str) -> ProbeInFlight:
        nonce, token = os.urandom(icmp.NONCE_BYTES), os.urandom(icmp.TOKEN_BYTES)
        probe = self.probes[nonce] = ProbeInFlight(src, dst, protocol, token)
        {"icmp": self._icmp, "udp": self._udp, "tcp": self._tcp}[protocol].append((nonce, probe))
        self._open += 1
        return probe

    # ---- the round ------------------------------------------------------------------------------
    def run(self) -> None:
        started = self._last_answer = time.perf_counter()
        for nonce, probe in self._icmp:
            self._send_icmp(nonce, probe, started)
        for nonce, probe in self._udp:
            self._send_udp(nonce, probe, started)
        self._start_tcp()
        late = 0
        try:
            while self._open and not (self.stop is not None and self.stop.is_set()):
                events = self.epoll.poll(max(self._next_deadline() - time.perf_counter(), 0), 4096)
                answers = sum(self._handlers.get(fd, self._stray)(fd, mask) for fd, mask in events)
                now = time.perf_counter()
                if answers:
                    self._last_answer = now
                self._start_tcp()
                if now < self._next_deadline():
                    continue
                # past a probe's deadline: read what already queued first (a few passes while more keeps coming)
                if events and late < LATE_PASSES:
                    late += 1
                    continue
                late = 0
                self._expire(now)
        finally:
            for fd, (_, probe) in list(self._clients.items()):
                self._finish_tcp(fd, probe)
            for fd, (_, conn, _) in list(self._accepted.items()):
                self._drop(fd, conn)

    def _deadline(self, probe: ProbeInFlight) -> float:
        return min(max(probe.sent_at, self._last_answer) + self.timeout_s, probe.sent_at + ROUND_LIMIT * self.timeout_s)

    def _next_deadline(self) -> float:
        """The deadline of the oldest probe still open (deadlines grow with the time a probe was sent)."""
        while self._sent and self._sent[0].done:
            self._sent.popleft()
        return self._deadline(self._sent[0]) if self._sent else time.perf_counter() + self.timeout_s

    def _expire(self, now: float) -> None:
        while self._sent and (self._sent[0].done or now >= self._deadline(self._sent[0])):
            probe = self._sent.popleft()
            self._done(probe)
            if probe.sock is not None:
                self._finish_tcp(probe.sock.fileno(), probe)

    def _sending(self, probe: ProbeInFlight, now: float) -> None:
        probe.sent_at = now
        self.granted += MOST[probe.protocol]
        self._sent.append(probe)

    def packets(self) -> int:
        """Once the round is over: the packets its probes may have put on the network, by what came back."""
        return sum((ANSWERED if probe.passed else UNANSWERED)[probe.protocol]
                   for probe in self.probes.values() if probe.sent_at)

    def _done(self, probe: ProbeInFlight) -> None:
        if not probe.done:
            probe.done = True
            self._open -= 1

    def _failed(self, probe: ProbeInFlight, error: int | str) -> None:
        why = error if isinstance(error, str) else DEFINITE.get(error, "")
        if why and not probe.error:
            probe.error = why
        if why:
            self._done(probe)

    def _stray(self, fd: int, events: int) -> int:
        return self._read_accepted(fd) if fd in self._accepted else self._tcp_event(fd, events)

    # ---- ICMP -----------------------------------------------------------------------------------
    def _send_icmp(self, nonce: bytes, probe: ProbeInFlight, now: float) -> None:
        # ident: 6 bits of round, 10 bits of source index; seq: destination index; the nonce proves the rest
        ends = self.ends
        packet = icmp.echo(icmp.ECHO_REQUEST, (self.round_id << 10) | ends.index[probe.src], ends.index[probe.dst],
                           icmp.PROBE_MAGIC + nonce, icmp.PROBE_FILLER)
        self._sending(probe, now)
        try:
            ends.raw[probe.src].sendto(packet, (ends.addresses[probe.dst], 0))
        except OSError as error:
            self._failed(probe, error.errno)  # an unreachable network, an OUTPUT rule ... or only a full buffer

    def _drain_icmp(self, node: str) -> int:
        """Read everything node's raw socket holds: answer probes meant for node, record answers to node's probes
        and errors about them. Returns how many packets belonged to this round's probes."""
        sock, ours = self.ends.raw[node], 0
        start, end = len(icmp.PROBE_MAGIC), icmp.HEAD_BYTES
        while True:
            try:
                packet = sock.recv(2048)
            except OSError:  # BlockingIOError: drained
                return ours
            header_len = (packet[0] & 0x0F) * 4
            if len(packet) < header_len + 8 + icmp.ANSWER_BYTES:
                continue
            kind, _code, _sum, ident, seq = icmp.HEADER.unpack_from(packet, header_len)
            payload = header_len + 8
            probe = self.probes.get(packet[payload + start:payload + end])
            if probe is None or probe.protocol != "icmp":
                self._icmp_error(node, packet)
                continue
            ours += 1
            magic = packet[payload:payload + start]
            if kind == icmp.ECHO_REQUEST and magic == icmp.PROBE_MAGIC:
                if node != probe.dst:
                    self.diverted.add((probe.src, probe.dst, node))  # answered locally or redirected: never vouched for
                    continue
                nonce = packet[payload + start:payload + end]
                answer = icmp.echo(icmp.ECHO_REPLY, ident, seq, icmp.ANSWER_MAGIC + nonce + probe.token,
                                   self.ends.signature(node))
                try:
                    sock.sendmsg([answer], from_address(packet[16:20]), 0, (socket.inet_ntoa(packet[12:16]), 0))
                except OSError:
                    pass  # no route back: the pair does not answer
            elif kind == icmp.ECHO_REPLY and node == probe.src:
                if magic == icmp.PROBE_MAGIC:
                    if packet[12:16] == socket.inet_aton(self.ends.addresses[probe.dst]):
                        probe.echoed = True
                elif magic == icmp.ANSWER_MAGIC and packet[payload + end:payload + icmp.ANSWER_BYTES] == probe.token:
                    probe.answered = True
                if probe.passed:
                    self._done(probe)

    def _icmp_error(self, node: str, packet: bytes) -> None:
        quoted = icmp.quoted_probe(packet)
        probe = self.probes.get(quoted[0]) if quoted else None
        if quoted and probe is not None and probe.protocol == "icmp" and probe.src == node and not probe.passed:
            self._failed(probe, quoted[1])

    # ---- UDP ------------------------------------------------------------------------------------
    def _send_udp(self, nonce: bytes, probe: ProbeInFlight, now: float) -> None:
        self._sending(probe, now)
        try:
            self.ends.udp_out[probe.src].sendto(icmp.PROBE_MAGIC + nonce + icmp.PROBE_FILLER.data,
                                                (self.ends.addresses[probe.dst], self.ends.udp_port))
        except OSError as error:
            self._failed(probe, error.errno)

    def _respond_udp(self, node: str) -> int:
        """node's responder: answer the probes meant for node (from the responder's port, to the probe's sender)."""
        sock, ours = self.ends.udp[node], 0
        while True:
            try:
                data, ancillary, _, sender = sock.recvmsg(2048, 64)
            except OSError:
                return ours
            probe = self.probes.get(data[len(icmp.PROBE_MAGIC):icmp.HEAD_BYTES])
            if probe is None or probe.protocol != "udp" or data[:len(icmp.PROBE_MAGIC)] != icmp.PROBE_MAGIC:
                continue
            ours += 1
            if node != probe.dst:
                self.diverted.add((probe.src, probe.dst, node))
                continue
            answer = icmp.ANSWER_MAGIC + data[len(icmp.PROBE_MAGIC):icmp.HEAD_BYTES] + probe.token
            probed_at = next((value[8:12] for level, kind, value in ancillary
                              if (level, kind) == (socket.IPPROTO_IP, IP_PKTINFO) and len(value) >= 12), None)
            try:
                sock.sendmsg([answer + self.ends.signature(node).data], from_address(probed_at) if probed_at else [],
                             0, sender)
            except OSError:
                pass

    def _answers_udp(self, node: str) -> int:
        """node's sender: the answers to node's probes."""
        sock, ours = self.ends.udp_out[node], 0
        while True:
            try:
                data = sock.recv(2048)
            except OSError:
                return ours
            probe = self.probes.get(data[len(icmp.PROBE_MAGIC):icmp.HEAD_BYTES])
            if (probe is not None and probe.protocol == "udp" and node == probe.src
                    and data[:icmp.ANSWER_BYTES] == icmp.ANSWER_MAGIC + data[len(icmp.PROBE_MAGIC):icmp.HEAD_BYTES] + probe.token):
                ours += 1
                probe.answered = True
                self._done(probe)

    # ---- TCP ------------------------------------------------------------------------------------
    def _start_tcp(self) -> None:
        """Open connections for queued TCP probes while the window has room (sockets made in their sources)."""
        room = self.ends.tcp_window - len(self._clients)
        if not self._tcp or room < min(len(self._tcp), self.ends.tcp_window // 4):
            return
        batch = [self._tcp.popleft() for _ in range(min(room, len(self._tcp)))]
        counts: dict[str, int] = {}
        for _, probe in batch:
            counts[probe.src] = counts.get(probe.src, 0) + 1
        made = self.ends.make_sockets(counts)
        now = time.perf_counter()
        for nonce, probe in batch:
            sock = probe.sock = made[probe.src].pop()
            sock.setblocking(False)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
            self._sending(probe, now)
            code = sock.connect_ex((self.ends.addresses[probe.dst], self.ends.tcp_port))
            if code not in (0, errno.EINPROGRESS):
                self._failed(probe, code)
                self._done(probe)
                probe.sock = None
                sock.close()
                continue
            self._clients[sock.fileno()] = (nonce, probe)
            self.epoll.register(sock.fileno(), _OUT | _ERR)

    def _tcp_event(self, fd: int, events: int) -> int:
        entry = self._clients.get(fd)
        if entry is None:
            return 0
        nonce, probe = entry
        sock = probe.sock
        assert sock is not None
        if not probe.connected:
            code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if not code and not events & _OUT:
                return 0
            if not code:
                try:
                    sock.send(icmp.PROBE_MAGIC + nonce)
                    probe.connected = True
                    self.epoll.modify(fd, _IN | _ERR)
                    return 0
                except BlockingIOError:
                    return 0
                except OSError as error:
                    code = error.errno
            self._failed(probe, code)  # refused, unreachable ...: the connection never came up
            self._done(probe)
            self._finish_tcp(fd, probe)
            return 1
        try:
            data = sock.recv(256)
        except BlockingIOError:
            return 0
        except OSError:
            data = b""
        probe.received += data
        if len(probe.received) < icmp.ANSWER_BYTES and data:
            return 0
        probe.answered = probe.received[:icmp.ANSWER_BYTES] == icmp.ANSWER_MAGIC + nonce + probe.token
        self._done(probe)
        self._finish_tcp(fd, probe)
        return 1

    def _finish_tcp(self, fd: int, probe: ProbeInFlight) -> None:
        self._clients.pop(fd, None)
        if probe.sock is not None:
            try:
                self.epoll.unregister(fd)
            except OSError:
                pass
            probe.sock.close()
            probe.sock = None

    def _accept(self, node: str) -> int:
        listener = self.ends.listeners[node]
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return 0
            conn = high_socket(conn)
            conn.setblocking(False)
            self._accepted[conn.fileno()] = (node, conn, b"")
            self.epoll.register(conn.fileno(), _IN | _ERR)
            self._read_accepted(conn.fileno())

    def _read_accepted(self, fd: int) -> int:
        node, conn, received = self._accepted[fd]
        try:
            data = conn.recv(64)
        except BlockingIOError:
            return 0
        except OSError:
            data = b""
        received += data
        if len(received) < icmp.HEAD_BYTES and data:
            self._accepted[fd] = (node, conn, received)
            return 0
        probe = self.probes.get(received[len(icmp.PROBE_MAGIC):icmp.HEAD_BYTES])
        if probe is not None and probe.protocol == "tcp" and received[:len(icmp.PROBE_MAGIC)] == icmp.PROBE_MAGIC:
            if node == probe.dst:
                try:
                    conn.send(icmp.ANSWER_MAGIC + received[len(icmp.PROBE_MAGIC):icmp.HEAD_BYTES] + probe.token)
                except OSError:
                    pass
            else:
                self.diverted.add((probe.src, probe.dst, node))
        self._drop(fd, conn)
        return 0

    def _drop(self, fd: int, conn: socket.socket) -> None:
        """Close an accepted connection with a reset: the answer already sent stays readable at the source, and
        neither end waits in TIME_WAIT (six packets per TCP probe in all)."""
        self._accepted.pop(fd, None)
        try:
            self.epoll.unregister(fd)
        except OSError:
            pass
        try:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RESET)
        except OSError:
            pass
        conn.close()
