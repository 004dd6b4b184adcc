"""Running one untrusted argv: no shell, no stdin, its own session, the whole group killed on timeout."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence


def run_bounded(
    argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None, merge_stderr: bool = False
) -> tuple[str, int | None]:
    """Run argv; returns (stdout then stderr as text, exit code or None when it timed out and was killed).

    Raises OSError when the program cannot be started.
    """
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        env=None if env is None else dict(env),
        start_new_session=True,  # so a timeout can kill everything the command started
    )
    try:
        out, err = process.communicate(timeout=timeout_s)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = None
    return out.decode("utf-8", "replace") + (err or b"").decode("utf-8", "replace"), code
