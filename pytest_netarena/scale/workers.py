"""`-n N` with a model agent: N episodes in flight on fewer xdist workers than the machine has cores, or none."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

@dataclass(frozen=True)
class WorkerSplit:
    """What `-n asked` became: `workers` xdist workers, each with `in_flight` episodes at once."""

    asked: int
    workers: int
    in_flight: int

    def header(self) -> str:
        keeps = f"--in-flight 1 keeps {self.asked} workers"
        if not self.workers:
            return (f"netarena: -n {self.asked} with a model agent: no workers, {self.in_flight} episodes in flight "
                    f"in this process (a lone worker would only add its start-up; {keeps})")
        return (f"netarena: -n {self.asked} with a model agent: {self.workers} worker{'s' * (self.workers > 1)} "
                f"(the cores but one, for the controller), {self.in_flight} episodes in flight in each ({keeps})")


def split_workers(asked: int, cores: int) -> WorkerSplit:
    """`asked` workers if the cores hold them; else one per core but the controller's, carrying at least
    `asked` episodes in flight between them, or none when that leaves one: a lone worker adds only its start-up
    and a second collection before the first model request, so this process runs them (docs/scale.md)."""
    if asked <= cores:
        return WorkerSplit(asked, asked, 1)
    workers = cores - 1
    if workers <= 1:
        return WorkerSplit(asked, 0, asked)
    return WorkerSplit(asked, workers, math.ceil(asked / workers))


def plain_numprocesses(typed: Any) -> int | None:
    """`-n` as the user typed it when it is a number of workers (not auto/logical, not absent)."""
    return typed if isinstance(typed, int) and not isinstance(typed, bool) and typed > 0 else None
