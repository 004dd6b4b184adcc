"""Run an a2a-sdk agent (card + executor) as a Starlette app under uvicorn, in a thread or in the foreground, guarded."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .guard import ConnectionLimits, guarded_protocol

#: seconds uvicorn lets open event streams finish when a server stops
GRACEFUL_SHUTDOWN_S = 1
#: the largest request body read (an assessment request or a turn's message is a few KiB)
MAX_BODY_BYTES = 1 << 20
#: JSON a request may hold: integers of at most this many digits (64-bit values have 20), nesting this deep
MAX_DIGITS = 20
MAX_DEPTH = 64
INVALID_PARAMS = -32602
logger = logging.getLogger("netarena.green")


@dataclass(frozen=True)
class Skill:
    """One skill advertised on an agent card."""

    id: str
    name: str
    description: str
    tags: tuple[str, ...] = ()


def make_card(
    name: str,
    description: str,
    url: str,
    skills: Sequence[Skill],
    *,
    version: str = "1.0.0",
    streaming: bool = True,
    input_modes: Sequence[str] = ("text",),
    output_modes: Sequence[str] = ("text",),
    protocol_versions: Sequence[str] = ("1.0", "0.3"),
) -> Any:
    """An AgentCard served at url over JSON-RPC, advertising A2A 1.0 and 0.3 (both are answered)."""
    from a2a.types.a2a_pb2 import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
    )

    return AgentCard(
        name=name,
        description=description,
        version=version,
        # the 0.3 entry also puts the legacy "url" field in the served JSON, which 0.3 clients require
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url, protocol_version=version)
                              for version in protocol_versions],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=list(input_modes),
        default_output_modes=list(output_modes),
        skills=[AgentSkill(id=s.id, name=s.name, description=s.description, tags=list(s.tags)) for s in skills],
    )


def make_asgi_app(card: Any, executor: Any) -> Any:
    """The Starlette app serving the card at /.well-known/agent-card.json and JSON-RPC at /."""
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
    from a2a.server.tasks import InMemoryTaskStore
    from starlette.applications import Starlette

    handler = DefaultRequestHandler(agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card)
    # AgentBeats agents still speak A2A 0.3 ("message/send"); the same endpoint answers both versions
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True)]
    one_line_errors()
    return BodyCap(Starlette(routes=routes), MAX_BODY_BYTES)


class OneLine(logging.Filter):
    """A record's exception as one line after its message, not a traceback (a hostile request's failure is the
    request's; tracebacks stay when the logger is set to DEBUG). a2a-sdk's record of a request it could not
    validate or parse is dropped: the error response it sends is logged anyway, with the reason, in one line."""

    REQUEST_FAULTS = ("Failed to validate", "Failed to parse")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None and not logging.getLogger(record.name).isEnabledFor(
                logging.DEBUG):
            if str(record.msg).startswith(self.REQUEST_FAULTS):
                return False
            error = record.exc_info[1]
            detail = " ".join(str(error).split())
            record.msg = f"{record.getMessage()}: {type(error).__name__}: {detail[:200]}"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


def one_line_errors() -> None:
    """Every a2a-sdk logger logs a request's exception in one line (12 bad requests logged 40 KB of tracebacks)."""
    for name in [name for name in logging.root.manager.loggerDict if name == "a2a" or name.startswith("a2a.")]:
        found = logging.getLogger(name)
        if not any(isinstance(item, OneLine) for item in found.filters):
            found.addFilter(OneLine())


class _Refused(Exception):
    """A JSON value the server does not take."""


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused(f"an integer of {len(text.lstrip('-')):,} digits (at most {MAX_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"a number past a float ({text[:30]})")
    return value


def _constant(name: str) -> Any:
    raise _Refused(f"{name} (not a JSON number)")


def request_problem(body: bytes) -> str | None:
    """Why the server does not take a JSON request body (too-long integers, numbers past a float, NaN, nesting
    over MAX_DEPTH), or None; a body that is no JSON at all is left to the JSON-RPC layer (-32700)."""
    try:
        value = json.loads(body, parse_int=_integer, parse_float=_float, parse_constant=_constant)
    except _Refused as error:
        return str(error)
    except RecursionError:
        return f"JSON nested deeper than {MAX_DEPTH} levels"
    except ValueError:
        return None
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"JSON nested deeper than {MAX_DEPTH} levels"
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return None


class BodyCap:
    """ASGI middleware: a request body over `limit` bytes is answered 413 and never held whole; the
    declared length is checked before anything is read, a chunked body while it arrives. A JSON body the
    server does not take (request_problem) is answered as JSON-RPC's invalid params, logged in one line."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    @property
    def state(self) -> Any:
        """The wrapped app's state (callers keep things there)."""
        return self.app.state

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(send)
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        problem = request_problem(body) if scope.get("method") == "POST" else None
        if problem is not None:
            client = (scope.get("client") or ("?",))[0]
            logger.warning("netarena server: refused a request from %s: %s", client, problem)
            await self._invalid(send, problem)
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if replayed:
                return await receive()  # later calls wait for a disconnect, as the app expects
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)

    async def _invalid(self, send: Callable[[Any], Any], problem: str) -> None:
        text = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": INVALID_PARAMS, "message": f"Invalid params: {problem}"}}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(text)).encode())]})
        await send({"type": "http.response.body", "body": text})

    async def _refuse(self, send: Callable[[Any], Any]) -> None:
        text = f"request body over {self.limit} bytes\n".encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(text)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": text})


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before the app is built so the card can name the real port."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def base_url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/"


def _uvicorn_server(app: Any, limits: ConnectionLimits) -> Any:
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="off", http=guarded_protocol(limits),
                            timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S)
    return uvicorn.Server(config)


class RunningServer:
    """An A2A server running in a daemon thread; `url` is its base URL. Use as a context manager."""

    def __init__(self, build_app: Callable[[str], Any], host: str = "127.0.0.1", port: int = 0,
                 card_url: str | None = None, limits: ConnectionLimits = ConnectionLimits()) -> None:
        self._sock = bind(host, port)
        self.url = base_url(self._sock)
        self.app = build_app(card_url or self.url)
        self._server = _uvicorn_server(self.app, limits)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        daemon=True, name=f"a2a-server-{self.url}")

    def start(self, timeout_s: float = 10.0) -> RunningServer:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the A2A server at {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(GRACEFUL_SHUTDOWN_S + 5)
        self._sock.close()

    def __enter__(self) -> RunningServer:  # noqa: PYI034
        return self.start() if not self._thread.is_alive() else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(build_app: Callable[[str], Any], host: str, port: int, card_url: str | None = None,
                  announce: Callable[[str], None] = print, limits: ConnectionLimits = ConnectionLimits()) -> None:
    """Serve in the foreground until interrupted; announce(url) once the socket is bound."""
    sock = bind(host, port)
    url = base_url(sock)
    server = _uvicorn_server(build_app(card_url or url), limits)
    announce(url)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
