"""The pingmesh: every ordered pair of nodes probed at once by ICMP, TCP and UDP, each answer proven by its destination.

Each node gets one raw ICMP socket created inside its network namespace (setns in a helper thread; a socket keeps
the namespace it was created in) and held by the harness, outside any agent box: the agent's uid and PID namespace
can neither signal nor replace it. For each measure every node also gets a UDP responder and a TCP listener on
ports drawn at random for that measure (so no rule written before it can single them out), a UDP sender on an
ephemeral port, and each TCP probe a new connection from a socket made in its source. A whole mesh is bursts of sendto() calls, a window of connections and
one epoll loop in this process: no process per pair. rounds.py says how a probe proves its destination.

A pair (src, dst) counts as reachable only when it answers by every protocol probed (ICMP, TCP and UDP under our
rules; ICMP alone under NetArena's): a firewall opened for ping alone leaves the pair unreachable. Missing answers
are re-probed before a pair counts as unreachable, so a loaded machine does not turn a reachable pair into a false
safety violation.
"""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

from ....sandbox import NetNamespace
from ....sandbox.netns import in_fresh_thread
from . import icmp
from .descriptors import high_socket, reserve
from .icmp import PROBE_BYTES
from .mesh import PROTOCOLS, Mesh
from .rounds import HOPS, IP_PKTINFO, ROUND_LIMIT, Endpoints, Interrupt, Round

__all__ = ["PROBE_BYTES", "Interrupt", "Mesh", "Prober", "ROUND_LIMIT", "ROUNDS_S"]

IP_MTU_DISCOVER, IP_PMTUDISC_DONT, IP_PMTUDISC_DO = 10, 0, 2
TCP_DEFER_ACCEPT = 9
#: reply waits of the rounds every missing pair gets, then of the rounds only previously reachable pairs get
FIRST_ROUNDS_S = (0.1, 0.1)
RETRY_ROUNDS_S = (0.25, 0.5)
ROUNDS_S = FIRST_ROUNDS_S + RETRY_ROUNDS_S
SO_RCVBUFFORCE = 33
RECEIVE_BUFFER = 4 << 20
#: ports drawn for a measure's UDP sockets and TCP listeners (below Linux's ephemeral range)
PORTS = (1024, 32767)
#: the fewest TCP probes open at once
MIN_WINDOW = 16
T = TypeVar("T")


#: a measure's UDP senders, UDP responders and TCP listeners by node, and the two ports
_Streams = tuple[dict[str, socket.socket], dict[str, socket.socket], dict[str, socket.socket], int, int]


def _in_namespaces(pids: Mapping[str, int], make: Mapping[str, Callable[[], T]]) -> dict[str, T]:
    """{node: make[node]()} with each call made inside node's namespace (that of process pids[node]), all from one
    helper thread that visits them in turn (a socket stays in the namespace it was created in)."""

    def visit() -> dict[str, T]:
        made = {}
        for node, call in make.items():
            with NetNamespace.of_process(pids[node]) as namespace:
                namespace.enter_current_thread()
            made[node] = call()
        return made

    return in_fresh_thread(visit)


def _raw_socket() -> socket.socket:
    sock = high_socket(socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
    sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    # a raw socket also gets a copy of every echo request sent to its node: room for big meshes
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
    sock.setblocking(False)
    return sock


def _udp_socket(port: int = 0) -> socket.socket:
    sock = high_socket(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
    try:
        # no IP_RECVERR: an ICMP error would make the socket's next call to any destination fail with it, so a
        # UDP probe's only definite errors are local ones (the ICMP and TCP probes of the pair get the remote ones)
        sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
        sock.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)  # a responder learns which address it was probed at
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RECEIVE_BUFFER)
        sock.setblocking(False)
        sock.bind(("0.0.0.0", port))
    except OSError:
        sock.close()
        raise
    return sock


def _tcp_socket() -> socket.socket:
    """A TCP socket that never sets don't-fragment: a segment too big for a small MTU is fragmented instead of
    teaching its own node a path MTU (a locked one, below the minimum) that outlives the MTU's repair by minutes."""
    sock = high_socket(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
    sock.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DONT)
    return sock


def _listener(port: int) -> socket.socket:
    sock = _tcp_socket()  # its connections inherit the setting
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, TCP_DEFER_ACCEPT, 1)  # accepted once the nonce is there
        sock.setblocking(False)
        sock.bind(("0.0.0.0", port))
        sock.listen(4096)
    except OSError:
        sock.close()
        raise
    return sock


def _window(probes: int) -> int:
    """How many TCP probes may be open at once: all of a round's when the process may open two descriptors each,
    else as many as fit. A window smaller than the round makes a round of dropped connections last several reply
    waits."""
    return max(MIN_WINDOW, min(probes, reserve(2 * probes) // 2))


class Prober:
    """Probes a network's pingmesh; one raw socket per node (sender and ICMP responder) for the whole episode,
    a UDP socket and a TCP listener per node for each measure."""

    def __init__(self, pids: Mapping[str, int], addresses: Mapping[str, str], nodes: Sequence[str],
                 protocols: Sequence[str] = PROTOCOLS) -> None:
        self.nodes = tuple(nodes)
        self.addresses = dict(addresses)
        self.protocols = tuple(protocols)
        self.pids = {node: pids[node] for node in self.nodes}
        self.sockets: dict[str, socket.socket] = {}
        self._epoll = select.epoll()
        reserve(4 * len(self.nodes))
        try:
            self.sockets = _in_namespaces(self.pids, dict.fromkeys(self.nodes, _raw_socket))  # type: ignore[assignment]
        except BaseException:
            self.close()
            raise
        for sock in self.sockets.values():
            self._epoll.register(sock.fileno(), select.EPOLLIN)
        self._index = {node: i for i, node in enumerate(self.nodes)}
        self._round = int.from_bytes(os.urandom(2), "big")
        #: probes that arrived in a namespace other than their destination's in the last measure (src, dst, where)
        self.diverted: set[tuple[str, str, str]] = set()
        self.interrupted = False  #: the last measure was stopped before its rounds ended
        self.ports = (0, 0)  #: the UDP and TCP ports of the last measure's responders and listeners
        self.sent: dict[str, int] = {}  #: probes sent by protocol since the prober was made
        self._settled = 0  #: packets the finished rounds' probes may have put on the network
        self._current: Round | None = None
        self._signatures: dict[str, icmp.Filler] = {}

    @property
    def packets(self) -> int:
        """The most packets this prober's probes may have made the network's links send (each packet counted once
        per link it crosses, as the meter counts), the round under way included: what the storm budget forgives."""
        current = self._current
        return HOPS * (self._settled + (current.granted if current is not None else 0))

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
        self.sockets = {}
        self._epoll.close()

    def measure(self, previous: Iterable[tuple[str, str]] | None = None,
                pairs: Iterable[tuple[str, str]] | None = None, stop: Interrupt | None = None,
                protocols: Sequence[str] | None = None) -> Mesh:
        """Probe every ordered pair (or only `pairs`) by every protocol (or only `protocols`): two short rounds for
        all of them, then longer rounds only for pairs that answered in `previous` (possible safety violations), so
        a broken network stays cheap. `stop` ends the measure early (`interrupted` says so)."""
        started = time.perf_counter()
        protocols = tuple(protocols or self.protocols)
        targets = list(pairs) if pairs is not None else [(s, d) for s in self.nodes for d in self.nodes if s != d]
        before = frozenset(previous) if previous is not None else None
        passed: dict[tuple[str, str], set[str]] = {pair: set() for pair in targets}
        errors: dict[tuple[str, str], str] = {}
        self.diverted, self.interrupted = set(), False
        pending = [(pair, protocol) for pair in targets for protocol in protocols]
        streams = self._open_streams() if pending and set(protocols) - {"icmp"} else None
        if stop is not None:
            self._epoll.register(stop.fileno(), select.EPOLLIN)  # wakes a round's wait the moment it is set
        try:
            for number, timeout_s in enumerate(ROUNDS_S):
                if number == len(FIRST_ROUNDS_S):
                    if before is None:
                        break
                    pending = [(pair, protocol) for pair, protocol in pending if pair in before]
                if not pending:
                    break
                if stop is not None and stop.is_set():
                    self.interrupted = True
                    break
                self._run_round(pending, timeout_s, streams, passed, errors, stop)
                pending = [(pair, protocol) for pair, protocol in pending if protocol not in passed[pair]]
        finally:
            if stop is not None:
                self._epoll.unregister(stop.fileno())
            if streams is not None:
                for sock in (*streams[0].values(), *streams[1].values(), *streams[2].values()):
                    sock.close()
        everything = set(protocols)
        reachable = frozenset(pair for pair, answered in passed.items() if answered == everything)
        partial = {pair: frozenset(answered) for pair, answered in passed.items() if answered and pair not in reachable}
        return Mesh(self.nodes, reachable, time.perf_counter() - started, protocols, partial, errors)

    def _run_round(self, pending: list[tuple[tuple[str, str], str]], timeout_s: float, streams: _Streams | None,
                   passed: dict[tuple[str, str], set[str]], errors: dict[tuple[str, str], str],
                   stop: Interrupt | None) -> None:
        udp_out, udp, listeners, udp_port, tcp_port = streams or ({}, {}, {}, 0, 0)
        ends = Endpoints(self.addresses, self._index, self.sockets, udp_out, udp, listeners, udp_port, tcp_port,
                         self._tcp_sockets, self._signature,
                         _window(sum(protocol == "tcp" for _, protocol in pending)))
        registered = [sock.fileno() for sock in (*udp_out.values(), *udp.values(), *listeners.values())]
        for fd in registered:
            self._epoll.register(fd, select.EPOLLIN | select.EPOLLERR)
        self._round = (self._round + 1) & 0x3F
        one = self._current = Round(ends, self._epoll, self._round, timeout_s, stop)
        probes = [one.add(src, dst, protocol) for (src, dst), protocol in pending]
        try:
            one.run()
        finally:
            for fd in registered:
                self._epoll.unregister(fd)
            self._settled += one.packets()  # before the round is forgotten: the count never drops meanwhile
            self._current = None
        if stop is not None and stop.is_set():
            self.interrupted = True
        self.diverted |= one.diverted
        for probe in probes:
            self.sent[probe.protocol] = self.sent.get(probe.protocol, 0) + bool(probe.sent_at)
            if probe.passed:
                passed[(probe.src, probe.dst)].add(probe.protocol)
            elif probe.error:
                errors.setdefault((probe.src, probe.dst), f"{probe.protocol}: {probe.error}")

    def _open_streams(self) -> _Streams:
        """This measure's UDP sender, UDP responder and TCP listener in every node, the last two on ports drawn for
        it (drawn again if one is taken in some node)."""
        for _ in range(20):
            udp_port, tcp_port = self._draw_ports()
            made: dict[str, list[socket.socket]] = {}

            def three(node: str, udp_port: int = udp_port, tcp_port: int = tcp_port,
                      made: dict[str, list[socket.socket]] = made) -> None:
                made[node] = [_udp_socket()]
                made[node].append(_udp_socket(udp_port))
                made[node].append(_listener(tcp_port))

            try:
                _in_namespaces(self.pids, {node: (lambda node=node: three(node)) for node in self.nodes})
            except OSError:
                for sockets in made.values():
                    for sock in sockets:
                        sock.close()
                continue
            self.ports = (udp_port, tcp_port)
            return ({node: sockets[0] for node, sockets in made.items()},
                    {node: sockets[1] for node, sockets in made.items()},
                    {node: sockets[2] for node, sockets in made.items()}, udp_port, tcp_port)
        raise OSError("no free ports for the pingmesh's UDP and TCP probes")

    @staticmethod
    def _draw_ports() -> tuple[int, int]:
        """A UDP and a TCP port for one measure, drawn anew each time: a rule written for the ports of an earlier
        measure (visible to a command with `ss` while one runs) singles out no later one."""
        low, high = PORTS
        return tuple(low + int.from_bytes(os.urandom(2), "big") % (high - low) for _ in range(2))  # type: ignore[return-value]

    def _tcp_sockets(self, counts: dict[str, int]) -> dict[str, list[socket.socket]]:
        return _in_namespaces(self.pids,  # type: ignore[return-value]
                              {node: (lambda count=count: [_tcp_socket() for _ in range(count)])
                               for node, count in counts.items()})

    def _signature(self, node: str) -> icmp.Filler:
        """The rest of node's answers: its name, then filler up to the probe size (checksum precomputed)."""
        filler = self._signatures.get(node)
        if filler is None:
            filler = self._signatures[node] = icmp.Filler.of(node.encode()[:64], icmp.ANSWER_TAIL)
        return filler
