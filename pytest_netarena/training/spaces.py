"""Text spaces for observations and replies: any Unicode text within a length, sampled from printable ASCII."""

from __future__ import annotations

import string
from typing import Any

from gymnasium.spaces import Text

#: what random samples are made of (a random reply is typing, not arbitrary Unicode)
SAMPLE_CHARSET = string.printable


class AnyText(Text):
    """A Text space holding every str of valid Unicode without NUL up to max_length characters.

    Gymnasium's Text holds only characters of its charset; command outputs hold any character, so
    membership checks the text itself and the charset only shapes `sample()`. Vector environments
    must pass shared_memory=False (shared memory stores charset indices).
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        if not isinstance(x, str) or not self.min_length <= len(x) <= self.max_length or "\0" in x:
            return False
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True

    def __repr__(self) -> str:
        return f"AnyText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, AnyText) and (self.min_length, self.max_length) == (other.min_length, other.max_length)

    def __hash__(self) -> int:
        return hash((AnyText, self.min_length, self.max_length))
