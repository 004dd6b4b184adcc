"""The model relay of a CLI agent's box: only the model calls its profile makes, streamed, with the real key.

The box holds a placeholder key; the relay puts the real one on each request it forwards. It forwards
a request only when its method, path and query parameters are one of the profile's model calls
(`ModelCall`, e.g. `POST /v1/messages`), matched on the raw path, which must hold no percent-encoding,
backslash, empty or dot segment; anything else is answered 403 and never reaches the upstream. The
upstream URL is built from the matched call, not from the request. A body is streamed to the upstream
as it arrives, at most MAX_RELAY_BODY a request, and at most MAX_IN_FLIGHT requests are relayed at once
(429 past it), so what the harness holds does not depend on what the box sends. Connection failures
and 5xx answers are recorded: a CLI that failed while its endpoint was unreachable is an
infrastructure error, not the agent's. 401 and 403 answers are recorded apart: whether the operator's key
was refused is asked of the endpoint by the harness itself (cli_agent.py), never taken from the box's request.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from ..serving import plain

#: the largest model request relayed (a long CLI conversation is a few MiB)
MAX_RELAY_BODY = 32 << 20
#: model requests relayed at once (a CLI makes one at a time, or a few)
MAX_IN_FLIGHT = 8
#: a path segment a model call may have (RFC 3986's unreserved characters; "." and ".." are refused apart)
_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
#: request headers never passed on: the box's own credentials, hop-by-hop ones, and those that could make a proxy
#: or an upstream take the request as another method, path or client
_DROPPED = {"host", "authorization", "x-api-key", "cookie", "content-length", "connection", "keep-alive",
            "transfer-encoding", "proxy-authorization", "proxy-connection", "upgrade", "te", "trailer", "expect",
            "x-http-method-override", "x-http-method", "x-method-override", "x-original-url", "x-rewrite-url",
            "x-original-method", "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
            "x-forwarded-prefix", "x-forwarded-port", "x-real-ip"}
_DROPPED_BACK = {"content-length", "transfer-encoding", "connection", "keep-alive"}


@dataclass(frozen=True)
class ModelCall:
    """One request a CLI makes of its model API: the method, the path under the API base, the query parameters it
    may carry."""

    method: str
    path: str
    query: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.method} {self.path}"


def path_problem(raw: bytes) -> str:
    """Why a raw request path cannot be a model call ("" when it can): percent-encoding, a backslash, a character
    outside RFC 3986's unreserved ones, an empty, "." or ".." segment."""
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return "a path that is not ASCII"
    if "%" in text:
        return "percent-encoding in the path"
    if "\\" in text:
        return "a backslash in the path"
    if not text.startswith("/"):
        return "a path that does not start with /"
    for segment in text[1:].split("/"):
        if segment in ("", ".", ".."):
            return "an empty or dot segment in the path"
        if not _SEGMENT.fullmatch(segment):
            return "a character outside letters, digits and -._~ in the path"
    return ""


class _TooLarge(Exception):
    """The box sent more than MAX_RELAY_BODY."""


class _Gone(Exception):
    """The box went away while sending its request."""


class Relay:
    """An ASGI app forwarding the box's model calls under `prefix` to `upstream`, with the real credentials in place
    of the box's, streaming the request and the answer; `calls` are the model calls forwarded."""

    def __init__(self, prefix: str, upstream: str, credentials: Mapping[str, str], timeout_s: float,
                 activity: Any = None, calls: Collection[ModelCall] = ()) -> None:
        self.activity = activity  #: told when a request starts and ends (a CLI waiting on its model is not idle)
        self.prefix = prefix.rstrip("/")
        self.upstream = upstream.rstrip("/")
        self.credentials = dict(credentials)
        self.timeout_s = timeout_s
        self.calls = {(call.method, call.path): call for call in calls}
        self.failures: list[str] = []  #: upstream connection errors and 5xx answers, in order
        #: 401 and 403 answers: the operator's key refused, or a request the box shaped; the harness tells which by
        #: asking the endpoint itself (cli_agent.py), since a box could provoke a 403 (a model the key may not use)
        self.refusals: list[str] = []
        self.refused: deque[str] = deque(maxlen=32)  #: the last requests refused, and why
        self.requests = 0  #: requests forwarded
        self.in_flight = 0
        self._client: Any = None

    def match(self, scope: dict[str, Any]) -> tuple[ModelCall | None, str]:
        """(the model call a request is, "") or (None, why it is none)."""
        raw = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "surrogateescape")
        method = scope.get("method", "")
        if not raw.startswith(self.prefix.encode() + b"/"):
            return None, "a path outside the relay"
        problem = path_problem(raw)
        if problem:
            return None, problem
        path = raw[len(self.prefix):].decode("ascii")
        call = self.calls.get((method, path))
        if call is None:
            known = ", ".join(sorted(str(known) for known in self.calls.values())) or "none"
            return None, f"{method} {path} is not a model call of this CLI (those are: {known})"
        names = {name for name, _ in _query(scope)}
        if names - set(call.query):
            return None, f"query parameters {sorted(names - set(call.query))} are not taken by {call}"
        return call, ""

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        call, why = self.match(scope)
        if call is None:
            self.refused.append(f"{scope.get('method', '')} {scope.get('raw_path', b'')[:200]!r}: {why}")
            await plain(send, 403, f"the relay forwards only this CLI's model calls: {why[:300]}\n")
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        declared = headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_RELAY_BODY):
            await plain(send, 413, f"model request over {MAX_RELAY_BODY} bytes\n")
            return
        if declared is not None and "transfer-encoding" in headers:  # framed two ways: the box's doing, not the API's
            await plain(send, 400, "a request with both Content-Length and Transfer-Encoding\n")
            return
        if self.in_flight >= MAX_IN_FLIGHT:
            await plain(send, 429, f"{MAX_IN_FLIGHT} model requests in flight: retry when one is done\n",
                        ((b"retry-after", b"1"),))
            return
        self.in_flight += 1
        self.requests += 1
        if self.activity is not None:
            self.activity.begin(call=False)
        try:
            await self._forward(scope, receive, send, call, headers, declared)
        finally:
            self.in_flight -= 1
            if self.activity is not None:
                self.activity.end()

    async def _forward(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any],
                       call: ModelCall, headers: dict[str, str], declared: str | None) -> None:
        import httpx

        if self._client is None:
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s, connect=10.0))
        query = urlencode(_query(scope))  # rebuilt from its parameters: nothing else of the box's text goes on
        target = f"{self.upstream}{call.path}" + (f"?{query}" if query else "")
        forwarded = [(name, value) for name, value in headers.items() if name not in _DROPPED]
        forwarded += list(self.credentials.items())
        chunked = "chunked" in headers.get("transfer-encoding", "").lower()
        if declared is not None:
            forwarded.append(("content-length", declared))  # streamed, yet framed as the box framed it
        content = _body(receive) if declared is not None or chunked else None
        try:
            request = self._client.build_request(call.method, target, headers=forwarded, content=content)
            response = await self._client.send(request, stream=True)
        except _TooLarge:
            await plain(send, 413, f"model request over {MAX_RELAY_BODY} bytes\n")
            return
        except _Gone:
            return
        except httpx.HTTPError as error:
            self.failures.append(f"{type(error).__name__}: {error}")
            await plain(send, 502, f"the model endpoint cannot be reached: {type(error).__name__}\n")
            return
        try:
            if response.status_code >= 500:
                self.failures.append(f"HTTP {response.status_code} from the model endpoint")
            elif response.status_code in (401, 403):  # the key's, or what the box asked for: the harness asks again
                self.refusals.append(f"HTTP {response.status_code} from the model endpoint")
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


def _query(scope: dict[str, Any]) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


async def _body(receive: Callable[[], Any]) -> AsyncIterator[bytes]:
    """The request's body as it arrives, at most MAX_RELAY_BODY bytes (_TooLarge past it, _Gone if the box left)."""
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_RELAY_BODY:
            raise _TooLarge
        if chunk:
            yield chunk
        if not message.get("more_body"):
            return
