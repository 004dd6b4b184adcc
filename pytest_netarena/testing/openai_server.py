"""A local OpenAI-compatible chat completions server with scripted replies, for driving agents in tests.

It speaks real HTTP on 127.0.0.1 (port 0), so a model-backed agent such as `ModelAgent` runs its
whole stack (httpx, or litellm and the provider SDK) exactly as against a real provider. Every request is
recorded for assertions.

    from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings
    from pytest_netarena.testing.openai_server import OpenAIStubServer, StubReply

    replies = [
        "kubectl get networkpolicy -n shop",           # a plain string: a normal 200 reply
        StubReply.error(429, "slow down"),              # a status code with an OpenAI error body
        '{"action": "patch", "name": "deny-all"}',      # the retry of the same turn gets this
    ]
    with OpenAIStubServer(replies) as server:
        agent = ModelAgent("openai/gpt-4o", ModelSettings(api_base=server.url + "/v1", api_key="test", backoff_s=0.01))
        ...  # run_episode(env, agent, ...)
        assert server.requests[0].messages[0]["role"] == "system"

Replies are consumed in order, one per request (retries included). Instead of a list, pass a
callable `replies(request_json) -> str | StubReply` to answer from what was asked, e.g. a scripted
"model" that reads the last observation. When a list runs out the server answers HTTP 500 with a
message saying so (an agent under test then retries and fails with an infrastructure error naming
it); `push()` adds replies while the server runs.

A scripted model that acts through tools answers `StubReply.calls(("run_kubectl", {"command": "..."}), ...)`:
a completion whose message holds those tool calls (arguments given as a dict are sent as JSON text, a str
verbatim, so malformed arguments can be scripted too); `request.tools` and `request.tool_messages` show what
the agent offered and sent back.

StubReply covers the failure modes: `StubReply.error(status, message)` (429, 500, 503, 401, 404...),
`StubReply.garbage(body)` (a 200 with a body that is not a completion), `StubReply.empty()` (a
completion whose content is null), `StubReply.no_choices()`, and `delay_s=` on any reply for slow
answers (the server's stop() interrupts the wait). Token counts are chars/4 unless given.
Streaming (`"stream": true`) is not supported. With `api_key=`, every request without that bearer key is answered
401 as OpenAI answers a wrong key.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .local_http import BackgroundServer

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class StubReply:
    """One scripted answer: a completion (content) or a raw status and body."""

    content: str | None = ""
    status: int = 200
    body: str | bytes | None = None  #: sent verbatim instead of a completion when given
    delay_s: float = 0.0  #: wait this long before answering
    prompt_tokens: int | None = None  #: None: estimated as request chars / 4
    completion_tokens: int | None = None  #: None: estimated as content chars / 4
    finish_reason: str = "stop"
    model: str | None = None  #: the model named in the reply; None: the requested one
    headers: tuple[tuple[str, str], ...] = ()
    choices: bool = True  #: False: a completion with an empty "choices" list
    #: tool calls of the message: (name, arguments) pairs, arguments a dict (sent as JSON) or the raw text sent
    tool_calls: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def calls(cls, *calls: tuple[str, Any], content: str | None = None) -> StubReply:
        """A completion that calls these tools (finish_reason "tool_calls"), with optional text beside them."""
        return cls(content=content, tool_calls=tuple(calls), finish_reason="tool_calls")

    @classmethod
    def error(
        cls, status: int, message: str = "", *, delay_s: float = 0.0, retry_after: float | None = None
    ) -> StubReply:
        """An OpenAI-style error response with this status."""
        error_type = {401: "invalid_request_error", 404: "invalid_request_error", 429: "rate_limit_exceeded"}
        body = json.dumps(
            {"error": {"message": message or f"stub error {status}", "type": error_type.get(status, "server_error"),
                       "param": None, "code": str(status)}}
        )
        headers = (("Retry-After", f"{retry_after:g}"),) if retry_after is not None else ()
        return cls(status=status, body=body, delay_s=delay_s, headers=headers)

    @classmethod
    def garbage(cls, body: str | bytes = "<html>502 upstream hiccup</html>", status: int = 200) -> StubReply:
        """A body that is not a chat completion (not JSON, or JSON of the wrong shape)."""
        return cls(status=status, body=body)

    @classmethod
    def empty(cls) -> StubReply:
        """A well-formed completion whose message content is null."""
        return cls(content=None)

    @classmethod
    def no_choices(cls) -> StubReply:
        """A well-formed completion with no choices at all."""
        return cls(content=None, choices=False)

    @classmethod
    def slow(cls, delay_s: float, content: str = "") -> StubReply:
        """A normal completion sent after a delay."""
        return cls(content=content, delay_s=delay_s)


ReplyLike = str | StubReply
Responder = Callable[[dict[str, Any]], ReplyLike]


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received, as parsed JSON (`body` is {} when it was not JSON)."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: dict[str, Any]
    received_at: float = field(default=0.0, compare=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def temperature(self) -> float | None:
        return self.body.get("temperature")

    @property
    def seed(self) -> int | None:
        return self.body.get("seed")

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools the request offered (OpenAI function format); [] when none."""
        return list(self.body.get("tools") or [])

    @property
    def tool_messages(self) -> list[dict[str, Any]]:
        """The `tool` messages of the request (each answering a call by its tool_call_id)."""
        return [message for message in self.messages if isinstance(message, dict) and message.get("role") == "tool"]


class OpenAIStubServer:
    """A threaded HTTP server answering chat completions from a script; use as a context manager."""

    def __init__(self, replies: Iterable[ReplyLike] | Responder = (), *, host: str = "127.0.0.1",
                 api_key: str | None = None) -> None:
        self.api_key = api_key  #: when set, every request without `Authorization: Bearer <api_key>` gets a 401
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._responder: Responder | None = replies if callable(replies) else None
        self._queue: list[ReplyLike] = [] if callable(replies) else list(replies)
        self._requests: list[RecordedRequest] = []
        self._ids = itertools.count(1)
        self._host = host
        self._server: BackgroundServer | None = None

    # lifecycle

    def start(self) -> OpenAIStubServer:
        handler = type("_BoundHandler", (_OpenAIHandler,), {"stub": self})
        self._server = BackgroundServer(handler, name="openai-stub-server", host=self._host)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.stop()
            self._server = None

    def __enter__(self) -> OpenAIStubServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # script and records

    @property
    def url(self) -> str:
        """The base URL, e.g. http://127.0.0.1:40123 (append /v1 for an OpenAI api_base)."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        return self._server.url

    def push(self, *replies: ReplyLike) -> None:
        """Append scripted replies to the queue."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every chat completion request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """Scripted replies not yet consumed."""
        with self._lock:
            return len(self._queue)

    # used by the handler

    def _record_and_choose(self, request: RecordedRequest) -> ReplyLike:
        with self._lock:
            self._requests.append(request)
            served = len(self._requests)
            if self._responder is None:
                if not self._queue:
                    return StubReply.error(500, f"OpenAIStubServer: no scripted reply left for request {served}")
                return self._queue.pop(0)
        return self._responder(request.body)

    def _wait(self, delay_s: float) -> bool:
        """Sleep for a slow reply; False when the server is stopping."""
        return not self._stopping.wait(delay_s)

    def _completion(self, reply: StubReply, request: dict[str, Any]) -> bytes:
        messages = request.get("messages") or []
        prompt_chars = sum(len(str(message.get("content") or "")) for message in messages if isinstance(message, dict))
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else max(1, prompt_chars // 4)
        calls = [{"id": f"call_stub_{next(self._ids)}", "type": "function",
                  "function": {"name": name, "arguments": arguments if isinstance(arguments, str)
                               else json.dumps(arguments)}} for name, arguments in reply.tool_calls]
        completion_tokens = (
            reply.completion_tokens if reply.completion_tokens is not None
            else (len(reply.content or "") + len(json.dumps(calls) if calls else "")) // 4
        )
        choices = []
        if reply.choices:
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if calls:
                message["tool_calls"] = calls
            choices.append({"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None})
        completion = {
            "id": f"chatcmpl-stub-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or request.get("model") or "stub",
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return json.dumps(completion).encode()


class _OpenAIHandler(BaseHTTPRequestHandler):
    stub: OpenAIStubServer
    protocol_version = "HTTP/1.1"  # keep-alive, as real providers do
    # headers and body leave in one segment: split writes meet delayed ACKs and cost ~40 ms a reply
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base class signature
        pass  # tests read server.requests, not stderr

    def _refused_key(self) -> bool:
        """As OpenAI answers a wrong key: 401 with its error body (the request is not recorded or answered)."""
        wanted = self.stub.api_key
        if wanted is None or self.headers.get("Authorization") == f"Bearer {wanted}":
            return False
        body = {"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error",
                          "param": None, "code": "invalid_api_key"}}
        self._send(401, json.dumps(body).encode())
        return True

    def do_GET(self) -> None:
        if self._refused_key():
            return
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(200, json.dumps({"object": "list", "data": []}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self._refused_key():
            return
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in CHAT_PATHS:
            message = f"OpenAIStubServer serves {CHAT_PATHS}, not {path}"
            self._send(404, json.dumps({"error": {"message": message}}).encode())
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        request = RecordedRequest("POST", path, dict(self.headers.items()), body, time.time())
        try:
            chosen = self.stub._record_and_choose(request)
        except Exception as error:  # a broken test responder should show up in the client's error
            self._send(500, json.dumps({"error": {"message": f"responder raised {error!r}"}}).encode())
            return
        reply = chosen if isinstance(chosen, StubReply) else StubReply(content=str(chosen))
        if reply.delay_s and not self.stub._wait(reply.delay_s):
            return
        if reply.body is not None:
            payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
        else:
            payload = self.stub._completion(reply, body)
        self._send(reply.status, payload, reply.headers)

    def _send(self, status: int, payload: bytes, headers: tuple[tuple[str, str], ...] = ()) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout fired); nothing to tell it
