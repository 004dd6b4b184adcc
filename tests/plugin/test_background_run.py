"""A run started as a background job (SIGINT ignored, as a shell without job control leaves it) hands its
processes SIGINT back, so boxed commands behave as in a run started in the foreground."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

PROBE = """
import subprocess

def pytest_sessionstart(session):
    status = subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout
    ignored = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
    print("child ignores SIGINT:", bool(ignored & (1 << (signal_number() - 1))))

def signal_number():
    import signal
    return int(signal.SIGINT)
"""


@pytest.mark.parametrize("netarena", [False, True], ids=["not-a-netarena-run", "netarena-run"])
def test_a_background_run_gets_sigint_back(toy: pytest.Pytester, netarena: bool) -> None:
    toy.makeconftest(PROBE)
    if not netarena:  # no netarena option or ini key: the plugin is dormant and changes nothing in the process
        toy.makeini("[pytest]\n")
    args = ("--agent=builtin:oracle", "--seed=1", "--queries=1") if netarena else ()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", *args], cwd=toy.path,
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert f"child ignores SIGINT: {not netarena}" in done.stdout, done.stdout + done.stderr
