"""Which connections a listener of the API server is serving, and closing them all (a listener that goes away)."""

from __future__ import annotations

import socket
import threading
import time


class TrackedConnections:
    """A mixin for a ThreadingHTTPServer: each connection and the thread serving it, until it ends."""

    def track_connections(self) -> None:
        self.open: dict[socket.socket, threading.Thread] = {}
        self.open_lock = threading.Lock()
        self.closing = False  #: close_connections was called: streams (watches, log follows) end

    def process_request_thread(self, request, client_address):
        with self.open_lock:
            self.open[request] = threading.current_thread()
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self.open_lock:
                self.open.pop(request, None)

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
