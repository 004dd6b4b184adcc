"""A threaded HTTP server on 127.0.0.1 serving a test's own request handler: started and stopped by its owner."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class BackgroundServer:
    """One handler class served on a free port of host by a daemon thread until stop()."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, name: str, host: str = "127.0.0.1") -> None:
        self._httpd = ThreadingHTTPServer((host, 0), handler)
        self._httpd.daemon_threads = True  # a handler sleeping on a slow reply must not block stop()
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=name, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serves handler on a free port of 127.0.0.1 in a thread; yields the base URL and stops the server after."""
    server = BackgroundServer(handler, name="test-http-server")
    try:
        yield server.url
    finally:
        server.stop()
