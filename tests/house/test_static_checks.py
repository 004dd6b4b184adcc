"""The linter (ruff) and the type checker (mypy) pass on the package, as configured in pyproject.toml."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pytest_netarena"


def _tool(name: str) -> None:
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed in this environment: pip install -e '.[dev]' (or scripts/bootstrap)")


def _run(*argv: str, timeout: float) -> subprocess.CompletedProcess[str]:
    # from the checkout's root, so that each tool reads pyproject.toml's configuration
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1"})


def test_ruff_finds_nothing_in_the_package() -> None:
    _tool("ruff")
    done = _run("ruff", "check", "--output-format", "concise", "pytest_netarena", timeout=120)
    assert done.returncode == 0, f"ruff check pytest_netarena:\n{done.stdout}{done.stderr}"


def test_mypy_finds_nothing_in_the_package() -> None:
    _tool("mypy")
    # its incremental cache outside the checkout, one per checkout folder, so a fresh clone where the last one was
    # starts warm: about a minute cold, seconds warm (mypy checks each cached module against its source's hash)
    folder = hashlib.sha256(str(ROOT).encode()).hexdigest()[:16]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-netarena" / "mypy" / folder
    done = _run("mypy", "--cache-dir", str(cache), timeout=600)
    assert done.returncode == 0, f"mypy (pyproject.toml's [tool.mypy]):\n{done.stdout[-20000:]}{done.stderr}"
    checked = re.search(r"no issues found in (\d+) source files", done.stdout)
    modules = sum(1 for _ in PACKAGE.rglob("*.py"))
    assert checked and int(checked.group(1)) == modules, f"mypy checked other files than the package's {modules}:\n" \
                                                         f"{done.stdout}"
