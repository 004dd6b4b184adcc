"""One description of an app's query catalogue, drawn either by a seeded sampler or by Hypothesis.

An app describes its catalogue once, as a function `draw(category, chooser, options)` that asks a
Chooser for every random decision. RandomChooser answers from a seeded `random.Random` (benchmark
runs); HypothesisChooser answers from Hypothesis draws (adversarial search), so Hypothesis can
shrink each decision towards its first option or lowest value. The two can never disagree about
what the catalogue holds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


@dataclass(frozen=True, order=True)
class Category:
    """A kind of query: a level and the operations or faults it composes."""

    level: int
    name: str  #: e.g. "remove+count" or "remove_ingress+change_port"


class Chooser(Protocol):
    """Every random decision a query generator makes goes through one of these."""

    def choice(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...

    def sample(self, options: Sequence[T], k: int) -> list[T]: ...


class RandomChooser:
    """Chooser backed by a seeded random.Random (benchmark mode)."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def choice(self, options: Sequence[T]) -> T:
        if not options:
            raise ValueError("nothing to choose from")
        return options[self.random.randrange(len(options))]

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        return self.random.sample(list(options), k)


class HypothesisChooser:
    """Chooser backed by a Hypothesis draw function (search mode); shrinks to early options."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        self.draw = draw

    def choice(self, options: Sequence[T]) -> T:
        from hypothesis import strategies as st

        if not options:
            raise ValueError("nothing to choose from")
        return self.draw(st.sampled_from(list(options)))

    def integer(self, low: int, high: int) -> int:
        from hypothesis import strategies as st

        return self.draw(st.integers(low, high))

    def sample(self, options: Sequence[T], k: int) -> list[T]:
        from hypothesis import strategies as st

        indices = self.draw(
            st.lists(st.integers(0, len(options) - 1), min_size=k, max_size=k, unique=True)
        )
        return [options[i] for i in indices]
