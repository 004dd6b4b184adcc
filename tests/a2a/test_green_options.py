"""`netarena serve-green --option`: an unknown key or a bad value is a usage error before the server listens."""

from __future__ import annotations

import subprocess
import sys

import pytest


def serve_green(*args: str) -> subprocess.CompletedProcess[str]:
    # a server that wrongly starts would listen until the timeout: the test then fails on TimeoutExpired
    return subprocess.run([sys.executable, "-m", "pytest_netarena.cli", "serve-green", "--port", "0", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(("app", "option", "said"), [
    ("malt", "malt-topolgy=synthetic:300", "unknown app option 'malt-topolgy' for malt; its options: malt-topology"),
    ("route", "malt-topology=synthetic:300", "unknown app option 'malt-topology' for route; its options: route-size"),
    ("route", "route-size=0x0", "--route-size '0x0'"),
])
def test_an_unknown_or_bad_option_is_a_usage_error(app: str, option: str, said: str) -> None:
    done = serve_green("--app", app, "--option", option)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and "listening" not in done.stdout
