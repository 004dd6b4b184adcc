"""The one HTTP listener every server of ours runs on: uvicorn, guarded, HTTP only, in a thread or in the foreground.

A2A green and purple servers, `netarena mcp --http` and a CLI box's MCP server and model relay all
serve their ASGI app through `Listener`: the guarded h11 protocol (`guard.py`: a deadline per request,
connections capped overall and per peer), no WebSocket or other upgrade, and `HttpOnly` in front of
the app so that no scope but HTTP (and the lifespan, for an app that holds state for its life)
reaches app code. No proxy headers are trusted and no server or date header is sent.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from .guard import ConnectionLimits, guarded_protocol

#: seconds uvicorn lets open responses (event streams) finish when a listener stops
GRACEFUL_SHUTDOWN_S = 1
#: connections asyncio's own loop accepts in one go (uvloop's admits each as it accepts it)
ASYNCIO_ACCEPT_BURST = 8


def event_loop() -> tuple[str, int]:
    """uvicorn's loop and listen backlog: uvloop where installed; else asyncio's, which accepts up to `backlog`
    connections before the guard sees the first (all of them descriptors held past the caps), so a small burst."""
    try:
        import uvloop  # noqa: F401 - only whether it is there
    except ImportError:
        return "asyncio", ASYNCIO_ACCEPT_BURST
    return "uvloop", 2048


def listening_socket(host: str = "127.0.0.1", port: int = 0, make: Callable[[int, int], socket.socket] = socket.socket,
                     backlog: int = 128) -> socket.socket:
    """A listening TCP socket; `make(family, kind)` creates it (e.g. inside a network namespace)."""
    sock = make(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    return sock


def url_of(sock: socket.socket) -> str:
    """http://HOST:PORT of a listening socket (no trailing slash)."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


class HttpOnly:
    """ASGI middleware: only HTTP requests reach the app, and the lifespan when the app holds state for its life; a
    WebSocket is closed before it is accepted (the client sees 403) and any other scope ends unanswered."""

    def __init__(self, app: Any, lifespan: bool = False) -> None:
        self.app, self.lifespan = app, lifespan

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        kind = scope.get("type")
        if kind == "http" or (kind == "lifespan" and self.lifespan):
            await self.app(scope, receive, send)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})


class Listener:
    """An ASGI app served on listening sockets: `start()` in a daemon thread (a context manager), or `run()` in the
    foreground until interrupted. `lifespan`: the app gets lifespan events (it holds a task group for its life)."""

    def __init__(self, app: Any, sockets: Iterable[socket.socket], limits: ConnectionLimits = ConnectionLimits(), *,
                 lifespan: bool = False, log_level: str = "warning", name: str = "netarena-http") -> None:
        import uvicorn

        loop, backlog = event_loop()
        config = uvicorn.Config(HttpOnly(app, lifespan), http=guarded_protocol(limits), ws="none", loop=loop,
                                backlog=backlog,
                                lifespan="on" if lifespan else "off", log_level=log_level, access_log=False,
                                proxy_headers=False, server_header=False, date_header=False,
                                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
        self.app = app
        self.server = uvicorn.Server(config)
        self.sockets = list(sockets)
        self.url = url_of(self.sockets[0])
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": self.sockets}, daemon=True,
                                       name=f"{name}-{self.url}")

    def start(self, timeout_s: float = 15.0) -> Listener:
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the HTTP listener at {self.url} did not start")
            time.sleep(0.01)
        return self

    def run(self) -> None:
        """Serve in this thread until interrupted (uvicorn's signal handlers stop it); the sockets are closed after."""
        try:
            self.server.run(sockets=self.sockets)
        finally:
            self._close()

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(GRACEFUL_SHUTDOWN_S + 9)
        self._close()

    def _close(self) -> None:
        for sock in self.sockets:
            sock.close()

    def __enter__(self) -> Listener:
        return self.start() if not self.thread.is_alive() else self

    def __exit__(self, *exc: object) -> None:
        self.stop()
