"""The MCP SDK of the previous major version (1.x), as clients that have not moved on still run it, in a virtual
environment of its own (the project's holds the 2.x): made once from this Python and cached outside the checkout."""

from __future__ import annotations

import sys
from pathlib import Path

#: the SDK 1.x the old-revision client runs
MCP1 = "mcp==1.30.0"


def mcp1_venv() -> Path:
    """The cached venv (VenvError when it cannot be made here)."""
    from pytest_netarena.testing.venvs import cached_venv

    return cached_venv("mcp1", getattr(sys, "_base_executable", sys.executable), [MCP1])


if __name__ == "__main__":
    print(mcp1_venv())
