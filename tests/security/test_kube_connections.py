"""Red team of the embedded API server's listener: connections opened without end, idle or each holding a watch,
cost the harness a descriptor and a thread each. The listener takes a capped number per peer and overall, and an
honest client still gets its answer. Sockets the test opens to a server it started on 127.0.0.1; peers from other
loopback addresses (127.0.0.x) stand for other clients."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from pytest_netarena.kube import EmbeddedAPIServer
from pytest_netarena.kube.connections import LIMITS

WATCH = b"GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: x\r\n\r\n"


@pytest.fixture
def server() -> Iterator[EmbeddedAPIServer]:
    with EmbeddedAPIServer(controllers=False) as running:
        yield running


def serving_threads() -> int:
    """Threads serving a connection of an http.server listener in this process."""
    return sum(1 for thread in threading.enumerate() if "process_request_thread" in thread.name)


def connect(server: EmbeddedAPIServer, source: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((source, 0))
    sock.settimeout(5)
    sock.connect((server.host, server.port))
    return sock


def flood(server: EmbeddedAPIServer, count: int, sources: list[str], request: bytes = b"") -> list[socket.socket]:
    """count connections spread over sources, each sending request (nothing: idle), held open by the test."""
    made = []
    for number in range(count):
        sock = connect(server, sources[number % len(sources)])
        if request:
            sock.sendall(request)
        made.append(sock)
    return made


def settled(measure, timeout_s: float = 10.0) -> int:
    """measure() once it has stopped changing for half a second (the server accepts and drops in its own time)."""
    deadline, last, since = time.monotonic() + timeout_s, measure(), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = measure()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= 0.5:
            break
    return last


def answered(server: EmbeddedAPIServer, source: str = "127.0.0.1") -> bytes:
    """What an honest client reads back for GET /version."""
    with connect(server, source) as sock:
        sock.sendall(b"GET /version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return sock.recv(64)


def closed_by_server(sock: socket.socket) -> bool:
    sock.settimeout(0.2)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def test_one_peer_holds_at_most_its_cap_of_idle_connections_and_an_honest_request_still_gets_in(server):
    before = serving_threads()
    held = flood(server, LIMITS.per_peer * 4, ["127.0.0.1"])
    try:
        assert settled(lambda: serving_threads() - before) <= LIMITS.per_peer
        assert answered(server).startswith(b"HTTP/1.1 200")  # it takes the place of the oldest idle one
        assert sum(closed_by_server(sock) for sock in held) >= LIMITS.per_peer * 3
    finally:
        close_all(held)


def test_a_peer_whose_connections_all_hold_watches_is_refused_more_and_others_still_get_in(server):
    before = serving_threads()
    held = flood(server, LIMITS.per_peer + 20, ["127.0.0.1"], WATCH)
    try:
        assert settled(lambda: serving_threads() - before) <= LIMITS.per_peer
        refused = [sock for sock in held if closed_by_server(sock)]
        assert len(refused) >= 20  # none of the watches is displaced: the newest are closed unserved
        assert answered(server, "127.0.0.2").startswith(b"HTTP/1.1 200")
    finally:
        close_all(held)


def test_connections_from_many_peers_stop_at_the_overall_cap(server):
    cap = LIMITS.overall()
    sources = [f"127.0.0.{number}" for number in range(2, 2 + cap // (LIMITS.per_peer // 2) + 2)]
    before = serving_threads()
    held = flood(server, cap + 100, sources)  # every peer under its own cap
    try:
        assert settled(lambda: serving_threads() - before) <= cap
        assert answered(server, "127.0.0.250").startswith(b"HTTP/1.1 200")
    finally:
        close_all(held)
