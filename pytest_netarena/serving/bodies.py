"""Request bodies a listener takes: a size cap checked before anything is held whole, JSON a JSON-RPC server can read.

`BodyCap` wraps an app: a body over its limit is answered 413 unread (the declared length is checked
first, a chunked body while it arrives), and a JSON body the server does not take (`request_problem`:
integers of thousands of digits, numbers past a float, NaN, nesting past MAX_DEPTH) is answered as
JSON-RPC's invalid params, logged in one line. Both the A2A servers and MCP over HTTP are JSON-RPC.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

#: the largest request body read (an assessment request, a turn's message or an MCP call is a few KiB)
MAX_BODY_BYTES = 1 << 20
#: JSON a request may hold: integers of at most this many digits (64-bit values have 20), nesting this deep
MAX_DIGITS = 20
MAX_DEPTH = 64
INVALID_PARAMS = -32602
logger = logging.getLogger("netarena.serving")


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


async def plain(send: Callable[[Any], Any], status: int, text: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    """Answer with a short text body."""
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


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
        await plain(send, 413, f"request body over {self.limit} bytes\n", ((b"connection", b"close"),))
