"""The processes the tests start may cache bytecode, so each pytest they start reuses its assertion rewrites."""

from __future__ import annotations

import os
import subprocess
import sys


def test_processes_the_tests_start_write_bytecode() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys; print(sys.dont_write_bytecode)"], env=dict(os.environ),
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False", "PYTHONDONTWRITEBYTECODE reaches the tests' pytest runs: see tests/conftest.py"
