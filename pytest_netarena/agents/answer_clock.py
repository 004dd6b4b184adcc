"""When an agent's answer began to arrive over HTTP: the first byte of it, which padding, chunking or a slow link after it cannot move.

An A2A agent is untrusted and owns its side of the connection: how it frames, pads and splits its reply
changes when the reply's *last* byte arrives (trailing whitespace that makes a proxy emit one more TCP
segment, a reply trickled in small chunks, megabytes of padding over a slow link), never when its first
byte does. So the agent's time for a turn is measured from the moment its request was handed to the
network to the first byte of the part of the answer that settled its content:

- a plain (non-streamed) answer: the first byte of the response body;
- a streamed answer (server-sent events): the first byte of the last event that changed the reply's
  non-whitespace text (status updates that say "working", and whitespace sent afterwards, do not count).

`ClockedTransport` wraps httpx's transport and records, for each exchange, when the request went out and
when each server-sent event began; `answer_s` reads them against the events the client parsed.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx  # this module is imported only where an agent speaks HTTP

#: a stream of more events than this is not searched for the one that settled the reply (quadratic): its last one is
MAX_SEARCHED_EVENTS = 400


@dataclass
class Exchange:
    """One request and its answer as the network delivered them."""

    sent_at: float  #: the request's last byte was handed to the network
    headers_at: float = 0.0
    body_at: float | None = None  #: the first byte of the body arrived
    events: list[float] = field(default_factory=list)  #: when each server-sent event with data began
    _line: bytearray = field(default_factory=bytearray)  #: the start of the current line (its field name)
    _line_open: bool = False
    _event_at: float | None = None  #: when the event now arriving began
    _event_data: bool = False

    def feed(self, chunk: bytes, now: float) -> None:
        """Account for one piece of the body; events are told apart by their blank lines (SSE)."""
        if not chunk:
            return
        if self.body_at is None:
            self.body_at = now
        start = 0
        while start < len(chunk):
            if not self._line_open:
                self._line_open = True
                self._line.clear()
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if len(self._line) < 8:
                self._line += piece[:8 - len(self._line)]
            if self._event_at is None and self._line.strip(b"\r"):
                self._event_at = now
            if end < 0:
                return
            self._end_line()
            start = end + 1

    def _end_line(self) -> None:
        self._line_open = False
        line = bytes(self._line).rstrip(b"\r")
        if line.startswith(b"data"):
            self._event_data = True
        if not line:  # a blank line ends the event
            if self._event_at is not None and self._event_data:
                self.events.append(self._event_at)
            self._event_at, self._event_data = None, False


class _ClockedRequest(httpx.AsyncByteStream):
    """A request body that notes when its last byte was handed over."""

    def __init__(self, inner: Any, exchange_started: Callable[[float], None]) -> None:
        self.inner = inner
        self.started = exchange_started

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            yield chunk
        self.started(time.perf_counter())

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


class _ClockedBody(httpx.AsyncByteStream):
    """A response body that notes when each piece arrived."""

    def __init__(self, inner: Any, exchange: Exchange) -> None:
        self.inner = inner
        self.exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            self.exchange.feed(chunk, time.perf_counter())
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class ClockedTransport(httpx.AsyncBaseTransport):
    """httpx's transport (or `wrapped`) keeping an Exchange per request, newest last."""

    def __init__(self, wrapped: Any | None = None) -> None:
        self.wrapped = wrapped or httpx.AsyncHTTPTransport()
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: Any) -> Any:
        exchange = Exchange(sent_at=time.perf_counter())
        self.exchanges.append(exchange)

        def sent(at: float) -> None:
            exchange.sent_at = at

        request.stream = _ClockedRequest(request.stream, sent)
        response = await self.wrapped.handle_async_request(request)
        exchange.headers_at = time.perf_counter()
        response.stream = _ClockedBody(response.stream, exchange)
        return response

    async def aclose(self) -> None:
        await self.wrapped.aclose()


def answer_s(exchange: Exchange, parsed: Sequence[Any], settled: Callable[[Sequence[Any]], str | None]) -> float | None:
    """The agent's time for the exchange: request out to the first byte of what settled its reply; None when
    nothing of a body arrived. `parsed`: the events the client read from it; `settled(events[:k])`: the reply those
    events give so far (None while they give none)."""
    if exchange.body_at is None:
        return None
    began = exchange.body_at
    if exchange.events and len(exchange.events) == len(parsed):
        began = exchange.events[_settling_event(parsed, settled)]
    return max(0.0, began - exchange.sent_at)


def _settling_event(parsed: Sequence[Any], settled: Callable[[Sequence[Any]], str | None]) -> int:
    """The index of the last event that changed the reply's non-whitespace text."""
    if len(parsed) > MAX_SEARCHED_EVENTS:
        return len(parsed) - 1
    last, seen = len(parsed) - 1, None
    for index in range(len(parsed)):
        text = settled(parsed[: index + 1])
        shape = None if text is None else "".join(text.split())
        if shape != seen:
            last, seen = index, shape
    return last
