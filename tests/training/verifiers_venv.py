"""verifiers 0.3 (the `rl` extra) in a virtual environment of its own: it declares `mcp<2`, our MCP server needs the
SDK 2.x, so the two cannot share the project's environment. Made once from this Python, cached outside the checkout,
with the dependencies of the extras a rollout needs; the checkout runs from PYTHONPATH."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the extras a rollout of each app needs beside `rl` (Gymnasium and datasets; kubectl and the API server's client)
EXTRAS = ("rl", "train", "k8s")


def verifiers_venv() -> Path:
    """The cached venv (VenvError when it cannot be made here)."""
    from pytest_netarena.testing.venvs import cached_venv, checkout_requirements

    python = getattr(sys, "_base_executable", sys.executable)
    return cached_venv("verifiers", python, checkout_requirements(ROOT, EXTRAS))


def verifiers_env() -> dict[str, str]:
    """The environment its Python runs in: this checkout first on the path."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path}


if __name__ == "__main__":
    print(verifiers_venv())
