"""A listener added to a running server can be closed alone: no new connection, and every connection it served ends
(a watch that would stream for minutes included) before close_listener returns; the other listeners serve on."""

from __future__ import annotations

import socket
import time

from pytest_netarena.kube import EmbeddedAPIServer


def _watch(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=600 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    return sock


def test_closing_a_listener_ends_its_connections_and_leaves_the_others():
    server = EmbeddedAPIServer().start()
    try:
        url = server.listen()
        port = int(url.rsplit(":", 1)[1])
        watching, idle = _watch(port), socket.create_connection(("127.0.0.1", port), timeout=5)
        started = time.monotonic()
        assert server.close_listener(url, timeout=10)
        assert time.monotonic() - started < 5  # the watch ended at once, not at its 600 s
        watching.settimeout(5)
        while watching.recv(4096):  # what was sent before, then the end (a timeout here fails the test)
            pass
        try:
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
            refused = False
        except OSError:
            refused = True
        assert refused
        still = _watch(server.port)  # the main listener serves on
        still.close()
        idle.close()
        watching.close()
    finally:
        server.stop()


def test_a_watch_whose_client_went_away_frees_its_place_at_once():
    """`kubectl wait` closes its watch when the condition is met; the server used to hold the watch's thread and its
    place under the connection caps until the next event or the timeout, so a few episodes of waits filled the
    per-peer cap and later kubectl calls met a closed connection (EOF)."""
    with EmbeddedAPIServer() as server:
        httpd = server._listeners[0][0]
        watches = [_watch(server.port) for _ in range(5)]
        assert len(httpd.open) == 5
        for sock in watches:
            sock.close()
        deadline = time.monotonic() + 5
        while httpd.open and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not httpd.open, f"{len(httpd.open)} watches still held after their clients left"
