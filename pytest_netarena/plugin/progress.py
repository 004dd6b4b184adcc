"""A line on the terminal now and then while one episode runs long (a CLI agent's can take minutes), never silence.

pytest shows nothing of a test until it ends, and an episode of a CLI or model agent can run for minutes. While
one does, a line says which test, which agent and for how long, every PROGRESS_S seconds (NETARENA_PROGRESS_S;
0 turns it off), written as pytest's live logging writes: with capture set aside for that line. Only a process
whose terminal the user sees writes it (not an xdist worker; the controller's line per test says enough there).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

import pytest

PROGRESS_S = 30.0


def interval_s() -> float:
    try:
        return max(0.0, float(os.environ.get("NETARENA_PROGRESS_S", PROGRESS_S)))
    except ValueError:
        return PROGRESS_S


@contextlib.contextmanager
def progress(config: pytest.Config, nodeid: str, agent: str) -> Iterator[None]:
    """While the block runs, a line every interval_s() seconds: the test, the agent, the time so far."""
    every = interval_s()
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if not every or terminal is None or hasattr(config, "workerinput") or config.get_verbosity() < 0:
        yield
        return
    done = threading.Event()
    started = time.monotonic()

    def tell() -> None:
        while not done.wait(every):
            line = f"netarena: {nodeid} ({agent}): episode running for {_duration(time.monotonic() - started)}"
            context = capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext()
            with context:
                terminal.write_line(line)

    thread = threading.Thread(target=tell, name="netarena-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"
