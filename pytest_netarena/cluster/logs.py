"""A container's log as the kubelet keeps it: timestamped lines, bounded in bytes, read with tail, limit and follow."""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone

#: bytes of log kept per container run (a kubelet rotates at 10 MiB; older lines are dropped here)
MAX_LOG_BYTES = 1 << 20
#: the longest line kept whole; longer ones are cut into pieces of this size (as CRI's 16 KiB partial lines)
MAX_LINE = 16 * 1024
#: how long `kubectl logs -f` may follow a container at most
FOLLOW_LIMIT_S = 600.0


def rfc3339(when: float) -> str:
    return datetime.fromtimestamp(when, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ").replace("000Z", "Z")


class ContainerLog:
    """The lines of one run of one container; appended by one writer, read by many."""

    def __init__(self, limit: int = MAX_LOG_BYTES) -> None:
        self.limit = limit
        self._lines: collections.deque[tuple[float, bytes]] = collections.deque()
        self._size = 0
        self._partial = b""
        self._closed = False
        self._changed = threading.Condition()
        self.written = 0  #: lines ever appended (a follower's position)

    def write(self, data: bytes) -> None:
        """Add output as it arrives; lines end at newlines (a trailing piece waits for its end or close)."""
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        while len(self._partial) > MAX_LINE:
            lines.append(self._partial[:MAX_LINE])
            self._partial = self._partial[MAX_LINE:]
        if lines:
            self._append(lines)

    def line(self, text: str) -> None:
        """One whole line (a stand-in's log entry)."""
        self._append([text.encode(errors="replace")[:MAX_LINE]])

    def close(self) -> None:
        """The container ended: its last piece of a line is a line, and followers stop."""
        if self._partial:
            self._append([self._partial])
            self._partial = b""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def closed(self) -> bool:
        return self._closed

    def _append(self, lines: list[bytes]) -> None:
        now = time.time()
        with self._changed:
            for line in lines:
                entry = line[:MAX_LINE] + b"\n"
                self._lines.append((now, entry))
                self._size += len(entry)
                self.written += 1
            while self._size > self.limit and self._lines:
                self._size -= len(self._lines.popleft()[1])
            self._changed.notify_all()

    def text(self, tail: int | None = None, limit: int | None = None, timestamps: bool = False,
             since_s: float | None = None) -> bytes:
        with self._changed:
            lines = list(self._lines)
        if since_s is not None:
            cutoff = time.time() - since_s
            lines = [entry for entry in lines if entry[0] >= cutoff]
        if tail is not None:
            lines = lines[len(lines) - tail:] if tail else []
        data = b"".join((rfc3339(when).encode() + b" " + line) if timestamps else line for when, line in lines)
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
                fresh = self.written - position
                lines = list(self._lines)[-fresh:] if fresh else []
                position = self.written
                closed = self._closed
            data = b"".join((rfc3339(when).encode() + b" " + line) if timestamps else line for when, line in lines)
            if limit is not None:
                data = data[:limit - sent]
            sent += len(data)
            yield data  # empty when it only woke up: the reader may stop there
            if closed:
                return
