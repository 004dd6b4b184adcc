"""`--shard K/N`: a deterministic 1/N slice of a run's collection, for CI matrices merged afterwards.

An item belongs to a shard by a hash of its node id, not by its position, so the slices of N
jobs never overlap and stay the same when one job collects a test the others do not.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..core.errors import UsageError


@dataclass(frozen=True)
class Shard:
    index: int  #: 1-based
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, nodeid: str) -> bool:
        digest = hashlib.sha256(nodeid.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def parse_shard(text: str | None) -> Shard | None:
    if text in (None, ""):
        return None
    index, sep, count = str(text).partition("/")
    try:
        shard = Shard(int(index), int(count))
    except ValueError:
        shard = None
    if not sep or shard is None or not 1 <= shard.index <= shard.count:
        raise UsageError(f"--shard takes K/N with 1 <= K <= N, e.g. 2/4; got {text!r}")
    return shard
