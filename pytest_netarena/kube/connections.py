"""Which connections a listener of the API server is serving, how many it takes, and closing them all.

A listener takes at most `LIMITS.connections` connections at once, and `LIMITS.per_peer` from one address, well
below the process's descriptor limit: each connection holds a descriptor and a thread, and an agent's box could
otherwise open thousands. The accounting is the hardened listener's (`serving.guard.Guard`): a connection over a
cap takes the place of the oldest one (of that peer, or of anyone) still sending its request or idle between two,
or is closed at once when every one is being served (a request, a watch, a log stream, an exec session).
"""

from __future__ import annotations

import select
import socket
import threading
import time

from ..serving.guard import ConnectionLimits, Guard

#: per listener: kubectl holds a few connections and a watch each; a live cluster's pods each have their own address
LIMITS = ConnectionLimits(connections=256, per_peer=64)


class _CountedConnection:
    """One admitted connection as the guard counts it."""

    def __init__(self, sock: socket.socket, peer: str, guard: Guard) -> None:
        self.sock, self.peer, self._guard = sock, peer, guard
        self.waiting = True  #: its request has not fully arrived yet (or it is idle between two)

    def drop(self, why: str) -> None:
        """Make room for a newer connection: shut this one down (the thread serving it ends at its next read)."""
        self._guard.release(self)
        self._guard.say(self.peer, why)
        try:  # the plain socket's shutdown: an SSLSocket's would drop its TLS state under a reading thread
            socket.socket.shutdown(self.sock, socket.SHUT_RDWR)
        except OSError:
            pass


class TrackedConnections:
    """A mixin for a ThreadingHTTPServer: each connection and the thread serving it, until it ends, under caps."""

    def track_connections(self, limits: ConnectionLimits = LIMITS) -> None:
        self.open: dict[socket.socket, threading.Thread] = {}
        self.open_lock = threading.Lock()
        self.closing = False  #: close_connections was called: streams (watches, log follows) end
        self.guard = Guard(limits)
        self._counted: dict[socket.socket, _CountedConnection] = {}

    def verify_request(self, request, client_address) -> bool:  # socketserver's signature
        """Admit the connection under the caps (False: the server closes it at once)."""
        connection = _CountedConnection(request, str(client_address[0]) if client_address else "", self.guard)
        with self.open_lock:
            if not self.guard.admit(connection):
                return False
            self._counted[request] = connection
        return True

    def mark_waiting(self, request: socket.socket, waiting: bool) -> None:
        """Whether the connection is awaiting (or still receiving) a request: only then may a newer one displace it."""
        with self.open_lock:
            connection = self._counted.get(request)
            if connection is not None:
                connection.waiting = waiting

    def process_request_thread(self, request, client_address):
        with self.open_lock:
            self.open[request] = threading.current_thread()
        try:
            super().process_request_thread(request, client_address)  # ThreadingMixIn's
        finally:
            with self.open_lock:
                self.open.pop(request, None)
                connection = self._counted.pop(request, None)
                if connection is not None:
                    self.guard.release(connection)

    def close_connections(self, timeout: float) -> bool:
        """Shut down every connection being served (its requests, watches, log streams and exec sessions end) and
        wait for their threads, again for any that registered meanwhile (accepted before the listener stopped);
        True when all ended within timeout."""
        self.closing = True
        deadline = time.monotonic() + timeout
        while True:
            with self.open_lock:
                served = dict(self.open)
            if not served:
                return True
            for conn in served:
                try:  # the plain socket's shutdown: an SSLSocket's would drop its TLS state under a reading thread
                    socket.socket.shutdown(conn, socket.SHUT_RDWR)
                except OSError:
                    pass
            for thread in served.values():
                thread.join(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                with self.open_lock:
                    return not any(thread.is_alive() for thread in self.open.values())


def hung_up(connection: socket.socket) -> bool:
    """Whether the client closed its side (a watch whose kubectl went away ends then, not at its next event: until
    then it held a thread and a place under the caps)."""
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLRDHUP)
    return bool(poller.poll(0))
