"""run_bounded: real subprocesses, output of both streams, exit codes, and a killed process group."""

from __future__ import annotations

import time

import pytest

from pytest_netarena.core.process import run_bounded


def test_output_of_both_streams_and_the_exit_code() -> None:
    text, code = run_bounded(["sh", "-c", "echo out; echo err >&2; exit 3"], 5)
    assert text == "out\nerr\n" and code == 3


def test_a_hung_command_and_its_children_are_killed_at_the_timeout() -> None:
    started = time.monotonic()
    text, code = run_bounded(["sh", "-c", "echo started; sleep 30 & sleep 30"], 0.5, merge_stderr=True)
    assert code is None and text == "started\n"
    assert time.monotonic() - started < 10  # the orphaned background sleep did not hold the pipe open


def test_a_missing_program_raises_oserror() -> None:
    with pytest.raises(OSError):
        run_bounded(["/nonexistent/program"], 1)
