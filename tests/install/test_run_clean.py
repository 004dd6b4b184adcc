"""The install tests' command runner leaves nothing running when a command overstays its timeout."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest


def running(pid: int) -> bool:
    """True while pid is a process that is not a zombie (a killed orphan waits to be reaped as one)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_timed_out_command_takes_its_children_with_it(tmp_path: Path, run_clean) -> None:
    recorded = tmp_path / "child"
    script = f"sleep 60 & echo $! > {recorded}; wait"
    for timeout in (1, 4, 16):  # longer only when a loaded machine's bash had not yet started its child
        with pytest.raises(subprocess.TimeoutExpired):
            run_clean(["bash", "-c", script], cwd=tmp_path, timeout=timeout)
        if recorded.exists() and recorded.read_text().strip():
            break
    child = int(recorded.read_text())
    deadline = time.monotonic() + 10
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child), f"the command's child {child} still runs"
