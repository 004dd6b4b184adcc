"""Stopping a boxed command as by Ctrl-C at its time limit: SIGINT from inside the box, SIGKILL a grace period later.

bubblewrap forwards no signal, so the interrupt comes from `timeout` inside the box (the box must
hold it: views.SHELL_TOOLS does), sent to everything the command started: ping prints its summary
and the output so far comes back. The box's own wall clock, a margin later, kills what is left.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.process import Finished

#: seconds between the interrupt at the time limit and SIGKILL
GRACE_S = 1.0
#: the box's own start and end, on top of the command's time and grace (the wall clock kills the box then)
BOX_MARGIN_S = 2.0
#: `timeout`'s exit statuses: the command ran out of time (interrupted), or was killed after the grace period
TIMED_OUT = (124, 128 + 9)


def wall_s(timeout_s: float) -> float:
    """The box's wall-clock limit for a command interrupted at timeout_s."""
    return timeout_s + GRACE_S + BOX_MARGIN_S


def argv(command: Sequence[str], timeout_s: float) -> list[str]:
    """command, interrupted at timeout_s and killed GRACE_S later."""
    return ["timeout", "--signal=INT", f"--kill-after={GRACE_S:g}", f"{timeout_s:g}", *command]


def timed_out(finished: Finished, timeout_s: float) -> bool:
    """Whether the command ran out of time: interrupted or killed by `timeout`, or by the box's wall clock."""
    return finished.timed_out or (finished.returncode in TIMED_OUT and finished.elapsed_s >= timeout_s)
