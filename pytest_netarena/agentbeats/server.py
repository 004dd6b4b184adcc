"""Run an a2a-sdk agent (card + executor) as a Starlette app on our one guarded listener, in a thread or in the foreground."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..serving import MAX_BODY_BYTES, BodyCap, ConnectionLimits, Listener, listening_socket, url_of


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


class RunningServer:
    """An A2A server running in a daemon thread; `url` is its base URL. Use as a context manager."""

    def __init__(self, build_app: Callable[[str], Any], host: str = "127.0.0.1", port: int = 0,
                 card_url: str | None = None, limits: ConnectionLimits = ConnectionLimits()) -> None:
        sock = listening_socket(host, port)  # bound before the app is built, so the card can name the real port
        self.url = url_of(sock) + "/"
        self.app = build_app(card_url or self.url)
        self._listener = Listener(self.app, [sock], limits, name="a2a-server")

    def start(self, timeout_s: float = 10.0) -> RunningServer:
        self._listener.start(timeout_s)
        return self

    def stop(self) -> None:
        self._listener.stop()

    def __enter__(self) -> RunningServer:  # noqa: PYI034
        if not self._listener.thread.is_alive():
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_forever(build_app: Callable[[str], Any], host: str, port: int, card_url: str | None = None,
                  announce: Callable[[str], None] = print, limits: ConnectionLimits = ConnectionLimits()) -> None:
    """Serve in the foreground until interrupted; announce(url) once the socket is bound."""
    sock = listening_socket(host, port)
    url = url_of(sock) + "/"
    listener = Listener(build_app(card_url or url), [sock], limits, name="a2a-server")
    announce(url)
    listener.run()
