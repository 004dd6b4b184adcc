"""Harbor itself (Python >= 3.12, `harbor==0.25.*`) in a virtual environment of its own beside the project's 3.11 one:
made once and cached outside the checkout, with this package's dependencies; the checkout runs from PYTHONPATH."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARBOR = "harbor==0.25.*"
#: the package's extras a Harbor trial on our provider needs (the embedded cluster, the episode's MCP server)
EXTRAS = ("k8s", "mcp")


def requirements() -> list[str]:
    """harbor and this package's dependencies (its own code comes from the checkout, never installed)."""
    from pytest_netarena.testing.venvs import checkout_requirements

    return [HARBOR, *checkout_requirements(ROOT, EXTRAS)]


def python312() -> str | None:
    """A Python 3.12 interpreter: pyenv's 3.12.1 (its shim is not enabled here), else python3.12 on PATH."""
    root = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=30).stdout.strip() or root
    except (OSError, subprocess.TimeoutExpired):
        pass
    candidates = sorted(Path(root, "versions").glob("3.12.*/bin/python3.12"), reverse=True)
    if candidates:
        return str(candidates[0])
    return shutil.which("python3.12")


def harbor_venv() -> Path:
    """The cached venv (VenvError when it cannot be made; LookupError when no Python 3.12 exists here)."""
    from pytest_netarena.testing.venvs import cached_venv

    python = python312()
    if python is None:
        raise LookupError("Harbor needs Python >= 3.12 and none is installed here (pyenv install 3.12, or apt-get "
                          "install python3.12)")
    return cached_venv("harbor", python, requirements())


def harbor_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment harbor runs in: this checkout first on the path."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return {**os.environ, "PYTHONPATH": path, **(extra or {})}


if __name__ == "__main__":
    print(harbor_venv())
