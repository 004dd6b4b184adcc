"""A scripted model behind a real HTTP server: which tool calls or text to answer on which turn, streamed as SSE.

The two CLI stubs (`responses_stub.py` for Codex, `messages_stub.py` for Claude Code) share this base. A
script is a list of turns; a request whose conversation holds none of the stub's tool calls gets turn 0,
one that holds calls of turn k gets turn k + 1, so a retried request gets the same answer again and
the CLI's own bookkeeping does not shift the script (a turn without a call ends a CLI's run). A `Call` names a tool by its short name ("run"), resolved against the names the
CLI offered ("mcp__netarena__run"); `Call(..., exact=True)` sends the name as written, e.g. a CLI's own
shell tool that should be switched off. Beyond the script's end the model says it is done.
Every request is recorded, with the usage the server reported for it.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .local_http import BackgroundServer

#: the largest request body read (a CLI's whole conversation; real providers take a few MiB)
MAX_BODY_BYTES = 32 << 20


@dataclass(frozen=True)
class Call:
    """One tool call the model makes."""

    tool: str  #: short name, matched against the offered tools' names (exact, or ending in __NAME or .NAME)
    arguments: Mapping[str, Any] | str = field(default_factory=dict)  #: a str is sent verbatim (e.g. broken JSON)
    exact: bool = False  #: send `tool` as written even when the CLI did not offer it

    def arguments_text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(dict(self.arguments))


@dataclass(frozen=True)
class Say:
    """Text the model writes."""

    text: str


Block = Call | Say
DONE = (Say("Done."),)


@dataclass(frozen=True)
class Recorded:
    """One request the stub answered: path, headers, parsed body, the turn it got and the usage reported for it."""

    path: str
    headers: Mapping[str, str]
    body: dict[str, Any]
    turn: int
    tokens_in: int
    tokens_out: int
    at: float


def resolve(name: str, offered: Sequence[str]) -> str:
    """The offered tool name a short name means: itself, or the one offered name ending in `__name` or `.name`."""
    if name in offered:
        return name
    matches = [full for full in offered if full.endswith((f"__{name}", f".{name}"))]
    return matches[0] if len(matches) == 1 else name


class ScriptedModel:
    """The script and the records, behind a threaded HTTP server on 127.0.0.1 (port 0); a context manager."""

    #: the API's name, for error messages
    api = "model"

    def __init__(self, turns: Sequence[Sequence[Block]], *, tokens_out_per_turn: int = 12,
                 api_key: str | None = None) -> None:
        self.api_key = api_key  #: when set, a request without it (bearer or x-api-key) gets a 401, as providers do
        self.turns = [tuple(turn) for turn in turns]
        self.tokens_out_per_turn = tokens_out_per_turn
        self._records: list[Recorded] = []
        self._lock = threading.Lock()
        self._ids = 0
        self._turn_of_call: dict[str, int] = {}
        self._server: BackgroundServer | None = None

    # -- what a subclass says: the protocol ------------------------------------------------------------------

    def call_ids(self, body: dict[str, Any]) -> list[str]:
        """The ids of the tool calls the request's conversation holds."""
        raise NotImplementedError

    def offered_tools(self, body: dict[str, Any]) -> list[str]:
        """The tool names the request offers the model."""
        raise NotImplementedError

    def handles(self, path: str) -> bool:
        raise NotImplementedError

    def events(self, body: dict[str, Any], blocks: Sequence[Block], turn: int, tokens_in: int,
               tokens_out: int) -> Iterator[tuple[str, dict[str, Any]]]:
        """The answer as (event name, data) pairs, in the order the real API streams them."""
        raise NotImplementedError

    def whole(self, body: dict[str, Any], blocks: Sequence[Block], turn: int, tokens_in: int,
              tokens_out: int) -> dict[str, Any]:
        """The answer as one JSON object, for a request that did not ask to stream."""
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_{self._ids:04d}"

    def call_id(self, turn: int) -> str:
        """A fresh id for a tool call of this turn (the next request holding it gets the next turn)."""
        call_id = self.next_id("call")
        with self._lock:
            self._turn_of_call[call_id] = turn
        return call_id

    def turn_of(self, body: dict[str, Any]) -> int:
        with self._lock:
            known = [self._turn_of_call[c] for c in self.call_ids(body) if c in self._turn_of_call]
        return max(known) + 1 if known else 0

    def blocks_for(self, turn: int) -> tuple[Block, ...]:
        return self.turns[turn] if turn < len(self.turns) else DONE

    def answer(self, path: str, headers: Mapping[str, str], body: dict[str, Any]) -> tuple[dict[str, Any] | None,
                                                                                         Iterator[bytes] | None]:
        """(a whole JSON answer or None, SSE chunks or None) for one request, recorded."""
        turn = self.turn_of(body)
        offered = self.offered_tools(body)
        blocks = tuple(Call(resolve(b.tool, offered), b.arguments) if isinstance(b, Call) and not b.exact else b
                       for b in self.blocks_for(turn))
        tokens_in = max(1, len(json.dumps(body)) // 4)
        tokens_out = self.tokens_out_per_turn
        with self._lock:
            self._records.append(Recorded(path, dict(headers), body, turn, tokens_in, tokens_out, time.time()))
        if body.get("stream"):
            return None, (f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
                          for name, data in self.events(body, blocks, turn, tokens_in, tokens_out))
        return self.whole(body, blocks, turn, tokens_in, tokens_out), None

    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._records)

    def usage(self) -> tuple[int, int]:
        """(input, output) tokens over every answered request."""
        records = self.requests
        return sum(r.tokens_in for r in records), sum(r.tokens_out for r in records)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub model server is not running")
        return self._server.url

    def start(self) -> ScriptedModel:
        handler = type("_Bound", (_ScriptedModelHandler,), {"model": self})
        self._server = BackgroundServer(handler, name=f"{self.api}-stub")
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self):  # noqa: ANN204 - the subclass
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _ScriptedModelHandler(BaseHTTPRequestHandler):
    model: ScriptedModel
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base class signature
        pass

    def _refused_key(self) -> bool:
        wanted = self.model.api_key
        sent = {self.headers.get("x-api-key"), (self.headers.get("Authorization") or "").removeprefix("Bearer ")}
        if wanted is None or wanted in sent:
            return False
        self._json(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})
        return True

    def do_GET(self) -> None:
        if self._refused_key():
            return
        self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": f"no GET {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._json(413, {"type": "error", "error": {"type": "request_too_large", "message": "body too large"}})
            self.close_connection = True
            return
        raw = self.rfile.read(length) if length else b""
        if self._refused_key():
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if not self.model.handles(path):
            self._json(404, {"type": "error", "error": {"type": "not_found_error",
                                                        "message": f"the {self.model.api} stub does not serve {path}"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "not JSON"}})
            return
        whole, chunks = self.model.answer(path, dict(self.headers.items()), body)
        if whole is not None:
            self._json(200, whole)
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in chunks or ():
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
