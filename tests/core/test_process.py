"""run_bounded: real subprocesses, merged output, exit codes, a killed process group and a bounded pipe."""

from __future__ import annotations

import time

import pytest

from pytest_netarena.core.process import run_bounded


def test_output_of_both_streams_and_the_exit_code() -> None:
    result = run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], 5)
    assert result.text == "out\nerr\n" and result.returncode == 3
    assert not result.timed_out and not result.truncated


def test_a_hung_command_and_its_children_are_killed_at_the_timeout() -> None:
    started = time.monotonic()
    result = run_bounded(["sh", "-c", "echo started; sleep 30 & sleep 30"], 0.5)
    assert result.returncode is None and result.timed_out and result.text == "started\n"
    assert time.monotonic() - started < 10  # the orphaned background sleep did not hold the pipe open


def test_a_flood_of_output_is_cut_at_the_limit_and_the_command_stopped() -> None:
    started = time.monotonic()
    result = run_bounded(["sh", "-c", "yes"], 30, limit=10_000)
    assert result.truncated and result.returncode is None
    assert len(result.output) == 10_000
    assert time.monotonic() - started < 10  # stopped at the cap, not at the timeout


def test_a_missing_program_raises_oserror() -> None:
    with pytest.raises(OSError):
        run_bounded(["/nonexistent/program"], 1)


def test_a_process_holding_over_1024_descriptors_still_reads_its_commands() -> None:
    """A route episode holds thousands of sockets while another's box starts: its pipe is numbered past 1,024,
    which select() refuses ('filedescriptor out of range'); the reader waits with poll()."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this process may open at most {hard} descriptors")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = []
    try:
        while len(os.listdir("/proc/self/fd")) < 1100:
            held.append(os.open(os.devnull, os.O_RDONLY))
        result = run_bounded(["sh", "-c", "echo read"], 5)
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert result.text == "read\n" and result.returncode == 0
