"""Running one argv with a time limit, reading its output through a bounded pipe, killing its whole group."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

#: default cap on what is kept of a command's output
OUTPUT_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Finished:
    """What a bounded run produced."""

    output: bytes  #: stdout then stderr (or both interleaved when merged), at most the limit
    returncode: int | None  #: None when it was killed (timeout or output cap)
    timed_out: bool = False
    truncated: bool = False  #: the output went over the limit; the process was stopped there
    elapsed_s: float = 0.0

    @property
    def text(self) -> str:
        return self.output.decode("utf-8", "replace")


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group the process leads (it was started in its own session)."""
    for target in (lambda: os.killpg(process.pid, signal.SIGKILL), process.kill):
        try:
            target()
        except (ProcessLookupError, PermissionError):
            pass


def read_bounded(process: subprocess.Popen, timeout_s: float, limit: int = OUTPUT_LIMIT,
                 started: float | None = None) -> Finished:
    """Read process.stdout until EOF, the deadline or `limit` bytes; kill the group on either limit.

    Never holds more than `limit` bytes: a command that floods its output is stopped at the cap.
    """
    assert process.stdout is not None
    started = time.perf_counter() if started is None else started
    deadline = started + timeout_s
    fd = process.stdout.fileno()
    waiting = select.poll()  # not select(): it refuses descriptors numbered 1,024 and up, which a busy process has
    waiting.register(fd, select.POLLIN)
    chunks: list[bytes] = []
    size = 0
    timed_out = truncated = False
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            timed_out = True
            break
        ready = waiting.poll(left * 1000)
        if not ready:
            continue
        chunk = os.read(fd, min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            truncated = True
            break
    if timed_out or truncated:
        kill_group(process)
    process.stdout.close()
    try:
        code: int | None = process.wait(timeout=max(0.1, deadline - time.perf_counter()) if not timed_out else 5)
    except subprocess.TimeoutExpired:  # output closed early but the process lingers
        kill_group(process)
        code = process.wait()
        timed_out = True
    if timed_out or truncated:
        code = None
    data = b"".join(chunks)[:limit]
    return Finished(data, code, timed_out, truncated, time.perf_counter() - started)


def run_bounded(
    argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None, merge_stderr: bool = True,
    limit: int = OUTPUT_LIMIT, pass_fds: Sequence[int] = (), on_start: Callable[[subprocess.Popen], None] | None = None,
) -> Finished:
    """Run argv (no shell, no stdin, own session); stdout and stderr merged into one bounded pipe.

    on_start gets the process as soon as it runs (another thread may stop it early with kill_group).
    Raises OSError when the program cannot be started.
    """
    started = time.perf_counter()
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.DEVNULL,
        env=None if env is None else dict(env),
        start_new_session=True,  # so a timeout can kill everything the command started
        pass_fds=tuple(pass_fds),
    )
    if on_start is not None:
        on_start(process)
    return read_bounded(process, timeout_s, limit, started)
