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
