"""What an unauthenticated caller may hold of one of our HTTP listeners: a deadline per request, caps on open connections.

Each request's head and body must arrive within a deadline, and open connections are capped overall
and per peer address, below the process's descriptor limit. uvicorn has neither (a slowloris that
trickles header bytes holds a descriptor per connection for ever), so every listener runs a subclass
of its h11 protocol that counts connections as they are made. A connection over its peer's cap
takes the place of that peer's oldest connection still sending its request (an honest client behind
the same address as a flood still gets in), or is closed when none of them is; one over the overall
cap does the same among all connections. A connection whose request (head and body) is not complete
within the deadline is closed, and the deadline starts again for each request a kept-alive
connection sends. No request is upgraded to another protocol (WebSocket): it is served as plain
HTTP, so every connection stays counted and timed here. Refusals are logged at most once per peer
per LOG_EVERY_S, in one line.
"""

from __future__ import annotations

import logging
import resource
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

#: at most one log line per peer in this many seconds (a flood of refusals writes no flood of lines)
LOG_EVERY_S = 30.0
logger = logging.getLogger("netarena.serving")


@dataclass(frozen=True)
class ConnectionLimits:
    """request_s: a request's head and body must arrive within it; connections: open at once (at most half
    the descriptor limit, whatever is asked); per_peer: open at once from one address."""

    request_s: float = 10.0
    connections: int = 256
    per_peer: int = 32

    def __post_init__(self) -> None:
        if not (self.request_s > 0 and self.connections >= 1 and self.per_peer >= 1):
            raise ValueError(f"connection limits must be positive: {self}")

    def overall(self) -> int:
        """The cap on open connections: as asked, but below half the soft limit on open descriptors."""
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        return self.connections if soft == resource.RLIM_INFINITY else max(1, min(self.connections, soft // 2))


class Guard:
    """The open connections of one listener (its event loop's thread only)."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits, self.cap = limits, limits.overall()
        self.open: dict[Any, None] = {}  #: admitted connections, oldest first
        self.per_peer: Counter[str] = Counter()
        self._said: dict[str, float] = {}

    def admit(self, connection: Any) -> bool:
        peer = connection.peer
        if self.per_peer[peer] >= self.limits.per_peer:
            if not self._make_room(peer, f"{self.limits.per_peer} open from {peer}: the per-peer cap"):
                self.say(peer, f"refused a connection from {peer}: {self.limits.per_peer} open from it, each "
                               "with its request in (the per-peer cap)")
                return False
        elif len(self.open) >= self.cap and not self._make_room(None, f"{self.cap} open: the cap"):
            self.say(peer, f"refused a connection from {peer}: {self.cap} connections open, each with its "
                           "request in (the cap)")
            return False
        self.open[connection] = None
        self.per_peer[peer] += 1
        return True

    def _make_room(self, peer: str | None, cap: str) -> bool:
        """Close the oldest connection (of `peer`, or of anyone) still sending its request; False if there is none."""
        slowest = next((other for other in self.open if other.waiting and peer in (None, other.peer)), None)
        if slowest is None:
            return False
        slowest.drop(f"closed the oldest unfinished request, from {slowest.peer}, for a new connection ({cap})")
        return True

    def release(self, connection: Any) -> None:
        if connection in self.open:  # a refused connection was never counted, a dropped one is released at once
            del self.open[connection]
            self.per_peer[connection.peer] -= 1
            if not self.per_peer[connection.peer]:
                del self.per_peer[connection.peer]

    def say(self, peer: str, text: str) -> None:
        now = time.monotonic()
        if now - self._said.get(peer, -LOG_EVERY_S) >= LOG_EVERY_S:
            self._said[peer] = now
            logger.warning("netarena server: %s (said once per %g s per peer)", text, LOG_EVERY_S)


def guarded_protocol(limits: ConnectionLimits) -> type:
    """uvicorn's h11 protocol class for one listener, under these limits (pass it as uvicorn's `http`)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    guard = Guard(limits)

    class GuardedH11Protocol(H11Protocol):
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self.peer = self.client[0] if self.client else ""
            self._deadline: Any = None
            self._armed_for: Any = None
            if not guard.admit(self):
                transport.abort()  # the descriptor is freed at once
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            guard.release(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._settle()

        def _should_upgrade(self) -> bool:
            # an upgraded connection would leave this protocol, its count and its deadline: serve it as HTTP
            return False

        def on_response_complete(self) -> None:
            self._arm()  # the next request on this connection has the same deadline
            super().on_response_complete()
            if self.transport.is_closing():
                self._disarm()
            else:
                self._settle()  # a pipelined request may be complete already

        @property
        def waiting(self) -> bool:
            """Whether the connection's current request has not fully arrived yet."""
            return self._deadline is not None

        def drop(self, why: str) -> None:
            self._disarm()
            guard.release(self)
            if not self.transport.is_closing():
                guard.say(self.peer, why)
                self.transport.abort()

        def _arm(self) -> None:
            self._disarm()
            self._armed_for = self.cycle  # complete once a later cycle has its whole body
            self._deadline = self.loop.call_later(limits.request_s, self.drop,
                                                  f"closed a connection from {self.peer}: no complete request "
                                                  f"within {limits.request_s:g} s")

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _settle(self) -> None:
            cycle = self.cycle
            if self._deadline is not None and cycle is not None and cycle is not self._armed_for \
                    and not cycle.more_body:
                self._disarm()

    return GuardedH11Protocol
