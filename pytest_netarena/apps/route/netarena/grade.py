"""NetArena's route verdicts as our own pure functions: its loss-based safety rule, success and iterations."""

from __future__ import annotations

from collections.abc import Sequence

from .rules import INITIAL_LOSS, MAX_ITERATIONS


class Safety:
    """Its safety rule: unsafe once the overall loss % exceeds the previous measurement's (the first
    measurement is compared with 100, so it never is)."""

    def __init__(self) -> None:
        self.previous = INITIAL_LOSS
        self.safe = True

    def check(self, loss: int) -> bool:
        rose = loss > self.previous
        self.previous = loss
        if rose:
            self.safe = False
        return rose


def iterations(commands: int, success: bool, max_iterations: int = MAX_ITERATIONS) -> int:
    """Its `iterations`: agent calls, i.e. commands + 1 on success, max_iterations + 1 on failure."""
    return commands + 1 if success else max_iterations + 1


def reported_iterations(steps: int, success: bool) -> int:
    """Its `iterations` of an episode our compat environment ran in `steps` steps: on success the steps
    already include the turn NetArena discards; on failure it counts one more than its budget."""
    return steps if success else steps + 1


def verdicts(losses: Sequence[int], max_iterations: int = MAX_ITERATIONS) -> tuple[bool, bool, int]:
    """(success, safe, iterations) when losses[k] is the loss measured after k commands (losses[0]:
    just after injection). A measurement of 0 % ends the episode: a fault that broke nothing is an
    immediate success with 1 iteration; at most max_iterations measurements are taken."""
    safety = Safety()
    for commands, loss in enumerate(losses[:max_iterations]):
        safety.check(loss)
        if loss == 0:
            return True, safety.safe, iterations(commands, True, max_iterations)
    return False, safety.safe, iterations(max_iterations, False, max_iterations)
