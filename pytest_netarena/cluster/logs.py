"""A container's log as the kubelet keeps it: timestamped lines, bounded in bytes, read with tail, limit and follow.

What a container writes costs the harness in proportion to bytes, not lines: each read of its output is kept as
one block of whole lines (split into lines only when someone reads the log), the oldest blocks go past the
byte bound, and a container's output is read at most READ_RATE bytes a second (all containers together at most
CLUSTER_READ_RATE): past that, its writes wait, as they wait on a full pipe.
"""

from __future__ import annotations

import collections
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime

#: bytes of log kept per container run (a kubelet rotates at 10 MiB; older lines are dropped here)
MAX_LOG_BYTES = 1 << 20
#: the longest line kept whole; longer ones are cut into pieces of this size (as CRI's 16 KiB partial lines)
MAX_LINE = 16 * 1024
#: how long `kubectl logs -f` may follow a container at most
FOLLOW_LIMIT_S = 600.0
#: bytes a second read of one container's output, and of all containers' together (each with a second's burst)
READ_RATE = 256 << 10
CLUSTER_READ_RATE = 2 << 20
_LONG = re.compile(rb"[^\n]{%d}(?=[^\n])" % MAX_LINE)


def rfc3339(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace("000Z", "Z")


class Throttle:
    """A token bucket: take(n) says how long to wait before the n bytes taken are due (0: at once)."""

    def __init__(self, rate: float, burst: float | None = None) -> None:
        self.rate, self.burst = rate, burst if burst is not None else rate
        self._tokens, self._at = self.burst, time.monotonic()
        self._lock = threading.Lock()

    def take(self, count: int) -> float:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate) - count
            self._at = now
            return max(0.0, -self._tokens / self.rate)


class ContainerLog:
    """The lines of one run of one container; appended by one writer, read by many."""

    def __init__(self, limit: int = MAX_LOG_BYTES) -> None:
        self.limit = limit
        self._blocks: collections.deque[tuple[float, bytes]] = collections.deque()  #: (when, whole lines)
        self._size = 0
        self._partial = b""
        self._closed = False
        self._changed = threading.Condition()
        self.written = 0  #: blocks ever appended (a follower's position)

    @property
    def size(self) -> int:
        """Bytes kept now (at most the limit)."""
        return self._size

    def write(self, data: bytes) -> None:
        """Add output as it arrives; lines end at newlines (a trailing piece waits for its end or close)."""
        data = self._partial + data
        end = data.rfind(b"\n") + 1
        whole, self._partial = data[:end], data[end:]
        if len(self._partial) > MAX_LINE:  # a line without end yet: its full pieces are lines already
            cut = (len(self._partial) - 1) // MAX_LINE * MAX_LINE
            whole += _cut_long(self._partial[:cut] + b"\n")
            self._partial = self._partial[cut:]
        if whole:
            self._append(_cut_long(whole))

    def line(self, text: str) -> None:
        """One whole line (a stand-in's log entry)."""
        self._append(text.encode(errors="replace")[:MAX_LINE].replace(b"\n", b" ") + b"\n")

    def close(self) -> None:
        """The container ended: its last piece of a line is a line, and followers stop."""
        if self._partial:
            self._append(_cut_long(self._partial + b"\n"))
            self._partial = b""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def _append(self, block: bytes) -> None:
        with self._changed:
            self._blocks.append((time.time(), block))
            self._size += len(block)
            self.written += 1
            while self._size > self.limit and len(self._blocks) > 1:
                self._size -= len(self._blocks.popleft()[1])
            if self._size > self.limit:  # one block over the bound alone: keep its newest lines
                when, block = self._blocks.pop()
                kept = block[len(block) - self.limit:]
                kept = kept[kept.find(b"\n") + 1:]  # from the first whole line
                self._blocks.append((when, kept))
                self._size = len(kept)
            self._changed.notify_all()

    def text(self, tail: int | None = None, limit: int | None = None, timestamps: bool = False,
             since_s: float | None = None) -> bytes:
        with self._changed:
            blocks = list(self._blocks)
        if since_s is not None:
            cutoff = time.time() - since_s
            blocks = [entry for entry in blocks if entry[0] >= cutoff]
        if tail is not None:
            blocks = _last_lines(blocks, tail)
        data = b"".join(_render(when, block, timestamps) for when, block in blocks)
        return data[:limit] if limit is not None else data

    def follow(self, tail: int | None = None, limit: int | None = None, timestamps: bool = False,
               since_s: float | None = None, limit_s: float = FOLLOW_LIMIT_S) -> Iterator[bytes]:
        """What text() gives, then each new line as it comes, until the run ends or limit_s passes (an empty piece
        about once a second while nothing comes)."""
        with self._changed:
            position = self.written
        first = self.text(tail, limit, timestamps, since_s)
        sent = len(first)
        yield first
        deadline = time.monotonic() + limit_s
        while limit is None or sent < limit:
            with self._changed:
                if self.written == position and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return
                    self._changed.wait(min(left, 1.0))
                fresh = min(self.written - position, len(self._blocks))
                blocks = list(self._blocks)[len(self._blocks) - fresh:] if fresh else []
                position = self.written
                closed = self._closed
            data = b"".join(_render(when, block, timestamps) for when, block in blocks)
            if limit is not None:
                data = data[:limit - sent]
            sent += len(data)
            yield data  # empty when it only woke up: the reader may stop there
            if closed:
                return


def _cut_long(block: bytes) -> bytes:
    """Lines over MAX_LINE cut into pieces of it (nothing is done per line). A line that long holds a whole aligned
    stretch of MAX_LINE / 2 bytes without a newline: where every such stretch has one, there is nothing to cut."""
    half = MAX_LINE // 2
    if all(block.find(b"\n", start, start + half) >= 0 for start in range(0, len(block) - half + 1, half)):
        return block
    return _LONG.sub(lambda m: m.group(0) + b"\n", block)


def _last_lines(blocks: list[tuple[float, bytes]], tail: int) -> list[tuple[float, bytes]]:
    if tail <= 0:
        return []
    kept: list[tuple[float, bytes]] = []
    for when, block in reversed(blocks):
        lines = block.count(b"\n")
        if lines >= tail:
            newline = len(block) - 1  # the end of the last line; the tail starts after the tail-th newline before it
            for _ in range(tail):
                newline = block.rfind(b"\n", 0, newline)
            kept.append((when, block[newline + 1:]))
            break
        kept.append((when, block))
        tail -= lines
    return kept[::-1]


def _render(when: float, block: bytes, timestamps: bool) -> bytes:
    if not timestamps:
        return block
    stamp = rfc3339(when).encode() + b" "
    return stamp + block[:-1].replace(b"\n", b"\n" + stamp) + b"\n"
