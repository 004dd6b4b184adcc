"""How an episode's MCP server is reached: stdio with bounded lines, or streamable HTTP with a bearer token and body caps.

HTTP is served only on loopback (or inside a box's namespace), on our one guarded listener
(`serving.Listener`), behind a bearer token compared in constant time, with a request body cap
before the SDK reads anything, a cap on MCP sessions (past it a new one ends the oldest idle one),
and DNS-rebinding protection (the Host header must name the listener). stdio reads lines of at most MAX_LINE_BYTES; a longer line is dropped
unread and answered as a parse error.
Both end when the client goes away, when it has been idle too long, at an overall deadline, or
shortly after the episode is over; `Watch` says which.
"""

from __future__ import annotations

import hmac
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..serving import BodyCap, plain
from .asgi import Routes
from .server import Activity

#: the largest stdio line read (a JSON-RPC message; a tool call's arguments are capped far below this)
MAX_LINE_BYTES = 1 << 20
#: MCP sessions one episode's HTTP server holds at once (a client may reconnect; a flood may not): past it, a new
#: session ends the oldest idle one (`SessionRoom`)
MAX_SESSIONS = 8
#: the path the MCP endpoint is served at
MCP_PATH = "/mcp"


@dataclass
class Watch:
    """When to stop serving: client idle for `idle_s`, `overall_s` after the start, `grace_s` after the episode ended."""

    activity: Activity
    is_over: Callable[[], bool]
    idle_s: float
    overall_s: float
    grace_s: float = 5.0
    started: float = 0.0
    over_since: float | None = None

    def __post_init__(self) -> None:
        self.started = time.monotonic()

    def why_stop(self) -> str:
        """"" while serving should go on, else why it stops."""
        now = time.monotonic()
        if self.is_over():
            self.over_since = self.over_since or now
            if now - self.over_since >= self.grace_s and not self.activity.running:
                return "over"
        if now - self.started >= self.overall_s:
            return f"the client was still connected {self.overall_s:g} s after the episode started"
        idle = self.activity.idle_s()
        if idle >= self.idle_s:
            return f"the client sent nothing for {idle:.0f} s"
        return ""


#: what an over-long line is read as (the SDK answers it as a parse error)
OVERSIZED = '{"error": "line over the limit"}\n'


class BoundedLines:
    """The lines of a pipe, read without blocking (so a silent client cannot hold the server's shutdown), at most
    `limit` bytes a line: the rest of a longer line is skipped unread and the line reads as OVERSIZED."""

    def __init__(self, fd: int, limit: int = MAX_LINE_BYTES) -> None:
        os.set_blocking(fd, False)
        self.fd, self.limit = fd, limit
        self.buffer = bytearray()
        self.skipping = False  #: inside a line that went over the limit
        self.eof = False

    def __aiter__(self) -> BoundedLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            newline = self.buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self.buffer[: newline + 1])
                del self.buffer[: newline + 1]
                if self.skipping:
                    self.skipping = False
                    return OVERSIZED
                return line.decode("utf-8", "replace")
            if len(self.buffer) > self.limit or (self.skipping and self.buffer):
                self.buffer.clear()
                self.skipping = True
            if self.eof:
                if self.buffer:
                    line, self.buffer = bytes(self.buffer), bytearray()
                    return line.decode("utf-8", "replace")
                raise StopAsyncIteration
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                continue
            if chunk:
                self.buffer += chunk
            else:
                self.eof = True


class PipeWriter:
    """Text written to a pipe without blocking: a client that stops reading cannot hold the server's shutdown."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd

    async def write(self, text: str) -> None:
        import anyio

        data = memoryview(text.encode("utf-8"))
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:
                await anyio.wait_writable(self.fd)

    async def flush(self) -> None:
        pass


async def serve_stdio(server: Any, watch: Watch, stdin: int, stdout: int) -> str:
    """Serve the MCP server on these pipes (file descriptors) until the client closes them or `watch` says stop;
    returns why it ended."""
    import anyio
    from mcp.server.stdio import stdio_server

    ended, ended_by = "the client closed the connection", list[str]()

    def stop(why: str) -> None:
        # the whole transport at once: were the server's streams closed first, the pipe reader could still be
        # handing it the client's next line and fail on the closed stream
        ended_by.append(why)
        transport.cancel()

    with anyio.CancelScope() as transport:  # cancelled at the end: the pipe reader may wait on a silent client
        async with stdio_server(BoundedLines(stdin), PipeWriter(stdout)) as (read_stream, write_stream):  # type: ignore[arg-type]  # duck-typed AsyncFiles: the methods stdio_server calls
            await _serve_streams(server, watch, read_stream, write_stream, stop)
            transport.cancel()
    return ended_by[0] if ended_by else ended


async def _serve_streams(server: Any, watch: Watch, read_stream: Any, write_stream: Any, stopped) -> None:
    """Run the server on the transport's streams until it ends or `watch` says stop (stopped(why) is then told)."""
    import anyio

    async with anyio.create_task_group() as group:
        async def run() -> None:
            await server.run(read_stream, write_stream, server.create_initialization_options())
            group.cancel_scope.cancel()

        async def guard() -> None:
            while True:
                await anyio.sleep(0.2)
                why = watch.why_stop()
                if why:
                    stopped(why)
                    group.cancel_scope.cancel()
                    return

        group.start_soon(run)
        group.start_soon(guard)


class BearerAuth:
    """ASGI middleware: requests without `Authorization: Bearer <token>` are answered 401 and reach nothing; no
    scope but HTTP reaches the app at all (a WebSocket is closed before it is accepted)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if not hmac.compare_digest(given, self.expected):
            await plain(send, 401, "a bearer token is required\n", ((b"www-authenticate", b"Bearer"),))
            return
        await self.app(scope, receive, send)


class SessionRoom:
    """ASGI wrapper of the SDK's session manager: at `limit` open sessions, a request opening another first ends the
    oldest session with no request in flight, with a DELETE as its client would send. A client that opens a session
    per call and never ends it (the MCP Inspector's CLI) then plays a whole episode; the sessions stay capped."""

    def __init__(self, manager: Any, limit: int) -> None:
        self.manager, self.limit = manager, limit
        self.in_flight: dict[str, int] = {}  #: session id -> its requests being served, oldest session first

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        session = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1")
        if session in self.in_flight:
            self.in_flight[session] += 1
            try:
                await self.manager.handle_request(scope, receive, send)
            finally:
                self.in_flight[session] -= 1
                if scope.get("method") == "DELETE":
                    self.in_flight.pop(session, None)
            return
        if not session:
            await self._make_room(scope)

        async def note_opened(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message.get("status", 500) < 400:
                opened = dict(message.get("headers") or []).get(b"mcp-session-id")
                if opened:
                    self.in_flight.setdefault(opened.decode("latin-1"), 0)
            await send(message)

        await self.manager.handle_request(scope, receive, note_opened if not session else send)

    async def _make_room(self, scope: dict[str, Any]) -> None:
        while len(self.in_flight) >= self.limit:
            idle = next((session for session, count in self.in_flight.items() if count == 0), None)
            if idle is None:
                return  # every session is busy: the SDK refuses the new one
            del self.in_flight[idle]
            # the opening request's own Host (the SDK checks it) and the session's id; nothing else of the client's
            host = [(name, value) for name, value in scope.get("headers") or [] if name == b"host"]
            ending = {**scope, "method": "DELETE", "headers": [*host, (b"mcp-session-id", idle.encode("latin-1"))],
                      "query_string": b""}

            async def no_body() -> dict[str, Any]:
                return {"type": "http.request", "body": b"", "more_body": False}

            async def drop(message: dict[str, Any]) -> None:
                pass

            await self.manager.handle_request(ending, no_body, drop)


def mcp_app(server: Any, hosts: list[str], idle_s: float, limit: int) -> tuple[Any, Callable[[], Any]]:
    """(the ASGI app serving the MCP server, streamable HTTP, with a body cap and DNS-rebinding protection; the
    lifespan it needs held open while it serves)."""
    import logging

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from mcp.server.transport_security import TransportSecuritySettings

    # a client's open event stream is cut when the episode's server stops: the SDK logs that as an error with a trace
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.CRITICAL)

    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=[f"http://{host}" for host in hosts])
    manager = StreamableHTTPSessionManager(app=server, security_settings=security, session_idle_timeout=idle_s,
                                           max_request_body_size=limit, max_sessions=MAX_SESSIONS)

    return BodyCap(SessionRoom(manager, MAX_SESSIONS), limit), manager.run


def http_routes(server: Any, token: str, hosts: list[str], idle_s: float, limit: int,
                extra: dict[str, Any] | None = None) -> Routes:
    """The ASGI app serving the MCP server at MCP_PATH (streamable HTTP), bearer-gated and capped, beside `extra`
    routes (a CLI box's model relay)."""
    app, lifespan = mcp_app(server, hosts, idle_s, limit)
    return Routes({MCP_PATH: BearerAuth(app, token), **(extra or {})}, lifespans=(lifespan,))


def stdio_streams() -> tuple[int, int]:
    """(stdin, a private copy of stdout) as file descriptors for the protocol; fd 1 then points at stderr, so
    nothing else the process or its children print can corrupt the protocol stream."""
    sys.stdout.flush()
    protocol = os.dup(1)
    os.dup2(2, 1)
    return sys.stdin.fileno(), protocol
