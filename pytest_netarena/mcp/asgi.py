"""Serving ASGI apps from the harness: uvicorn on sockets it made (loopback, or inside a box's namespace), in a thread.

`Served` runs one uvicorn server with the lifespan on, so an app can hold a task group for its life (the
MCP SDK's session manager does). `Routes` sends a request to the app whose path prefix it starts with.
`Relay` forwards a box's model requests to the real endpoint: the box holds a placeholder key, the
relay puts the real one on each request, so the key never enters the box or its transcript.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

#: the largest model request relayed (a long CLI conversation is a few MiB)
MAX_RELAY_BODY = 32 << 20
#: request headers never passed on: the box's own credentials and hop-by-hop ones
_DROPPED = {"host", "authorization", "x-api-key", "content-length", "connection", "keep-alive", "transfer-encoding",
            "proxy-authorization", "upgrade", "te"}
_DROPPED_BACK = {"content-length", "transfer-encoding", "connection", "keep-alive"}


def loopback_socket(make: Callable[[int, int], socket.socket] = socket.socket, host: str = "127.0.0.1",
                    port: int = 0) -> socket.socket:
    """A listening TCP socket on a loopback address; `make(family, kind)` creates it (e.g. inside a namespace)."""
    sock = make(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(64)
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


class Routes:
    """An ASGI app sending each request to the app of the longest path prefix it starts with (404 otherwise);
    lifespan events reach every app that wants them."""

    def __init__(self, routes: Mapping[str, Any], lifespans: tuple[Callable[[], Any], ...] = ()) -> None:
        self.routes = sorted(routes.items(), key=lambda item: -len(item[0]))
        self.lifespans = lifespans  #: async context managers to hold open while the server runs

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        for prefix, app in self.routes:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                await app(scope, receive, send)
                return
        await plain(send, 404, "not found\n")

    async def _lifespan(self, receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        from contextlib import AsyncExitStack

        async with AsyncExitStack() as stack:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    for make in self.lifespans:
                        await stack.enter_async_context(make())
                except Exception as error:  # noqa: BLE001 - reported to uvicorn, which stops
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
                message = await receive()
            if message["type"] == "lifespan.shutdown":
                await stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})


async def plain(send: Callable[[Any], Any], status: int, text: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class Relay:
    """An ASGI app forwarding every request under its prefix to `upstream` (path kept after the prefix), with the
    real credentials in place of the box's, streaming the answer back. Connection failures are recorded:
    a CLI that failed while its endpoint was unreachable is an infrastructure error, not the agent's."""

    def __init__(self, prefix: str, upstream: str, credentials: Mapping[str, str], timeout_s: float,
                 activity: Any = None) -> None:
        self.activity = activity  #: told when a request starts and ends (a CLI waiting on its model is not idle)
        self.prefix = prefix.rstrip("/")
        self.upstream = upstream.rstrip("/")
        self.credentials = dict(credentials)
        self.timeout_s = timeout_s
        self.failures: list[str] = []  #: upstream connection errors and 5xx answers, in order
        self.requests = 0
        self._client: Any = None

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        import httpx

        body, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            size += len(message.get("body", b""))
            if size > MAX_RELAY_BODY:
                await plain(send, 413, f"model request over {MAX_RELAY_BODY} bytes\n")
                return
            body.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s, connect=10.0))
        path = scope["path"][len(self.prefix):]
        query = scope.get("query_string", b"").decode("latin-1")
        target = f"{self.upstream}{path}" + (f"?{query}" if query else "")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope.get("headers", [])
                   if k.decode("latin-1").lower() not in _DROPPED]
        headers += list(self.credentials.items())
        self.requests += 1
        if self.activity is not None:
            self.activity.begin(call=False)
        try:
            await self._forward(scope, send, target, headers, b"".join(body))
        finally:
            if self.activity is not None:
                self.activity.end()

    async def _forward(self, scope: dict[str, Any], send: Callable[[Any], Any], target: str,
                       headers: list[tuple[str, str]], body: bytes) -> None:
        import httpx

        try:
            request = self._client.build_request(scope["method"], target, headers=headers, content=body)
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as error:
            self.failures.append(f"{type(error).__name__}: {error}")
            await plain(send, 502, f"the model endpoint cannot be reached: {type(error).__name__}\n")
            return
        try:
            if response.status_code >= 500:
                self.failures.append(f"HTTP {response.status_code} from the model endpoint")
            back = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.multi_items()
                    if k.lower() not in _DROPPED_BACK]
            await send({"type": "http.response.start", "status": response.status_code, "headers": back})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        except httpx.HTTPError as error:
            self.failures.append(f"{type(error).__name__} while streaming: {error}")
        finally:
            await response.aclose()


class Served:
    """An ASGI app served by uvicorn on the given listening sockets, in a daemon thread; a context manager."""

    def __init__(self, app: Any, sockets: list[socket.socket], name: str = "netarena-asgi") -> None:
        import uvicorn

        config = uvicorn.Config(app, log_level="critical", lifespan="on", timeout_graceful_shutdown=1,
                                access_log=False, proxy_headers=False, server_header=False, date_header=False)
        self.server = uvicorn.Server(config)
        self.sockets = sockets
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": sockets}, daemon=True, name=name)

    def start(self, timeout_s: float = 15.0) -> Served:
        self.thread.start()
        deadline = time.monotonic() + timeout_s
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the harness's HTTP server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread.is_alive():
            self.thread.join(10)
        for sock in self.sockets:
            sock.close()

    def __enter__(self) -> Served:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
