"""Virtual environments the tests need beside the project's own, made once and cached outside any checkout.

Another MCP SDK, Harbor on Python 3.12, verifiers 0.3 (whose `mcp<2` cannot live beside our MCP server's SDK).

Each environment is named by what it holds: `<cache>/<name>-<hash of the interpreter's version and requirements>`,
where the cache is $NETARENA_VENV_CACHE or ~/.cache/pytest-netarena/venvs. It is made under a lock (one process makes
it, the others wait) and counts as made only once its marker file is written, so a half-made environment is never
used; pip runs with the machine's own configuration (its index).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path


class VenvError(RuntimeError):
    """The environment could not be made here (no such interpreter, or pip failed); the message says why."""


def cache_root() -> Path:
    configured = os.environ.get("NETARENA_VENV_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pytest-netarena" / "venvs"


def checkout_requirements(root: Path, extras: Sequence[str]) -> list[str]:
    """The dependencies of the checkout at `root` and of its `extras` (pyproject.toml); its own code is never installed:
    an environment made from these runs the checkout from PYTHONPATH."""
    import tomllib

    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    found = list(project["dependencies"])
    for extra in extras:
        found += project["optional-dependencies"][extra]
    return found


def python_version(python: str) -> str:
    done = subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise VenvError(f"{python} does not run: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def cached_venv(name: str, python: str, requirements: Sequence[str], timeout_s: float = 1200.0) -> Path:
    """The folder of a virtual environment of `python` holding `requirements` (pip's syntax), made when missing.

    Raises VenvError when the interpreter is missing or pip fails (its last lines are in the message)."""
    import fcntl

    if not (os.path.isfile(python) or shutil.which(python)):
        raise VenvError(f"no interpreter {python}")
    version = python_version(python)
    key = hashlib.sha256("\n".join([version, *requirements]).encode()).hexdigest()[:12]
    target = cache_root() / f"{name}-{key}"
    marker = target / "netarena-requirements.txt"  #: written last: the environment is complete
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process making the same environment: wait for it
        if marker.is_file():
            return target
        shutil.rmtree(target, ignore_errors=True)  # a half-made one
        try:
            # made where it lives (its scripts name their interpreter by path); complete only once the marker is in
            made = subprocess.run([python, "-m", "venv", str(target)], capture_output=True, text=True, timeout=300)
            if made.returncode != 0:
                raise VenvError(f"{python} -m venv failed: {made.stderr.strip()[-300:]}")
            done = subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
                                  capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
            if done.returncode != 0:
                tail = " | ".join([line for line in (done.stderr or done.stdout).strip().splitlines()
                                   if not line.startswith("WARNING")][-3:])
                raise VenvError(f"pip could not install {' '.join(requirements)}: {tail}")
        except subprocess.TimeoutExpired:
            shutil.rmtree(target, ignore_errors=True)
            raise VenvError(f"making {name} took more than {timeout_s:g} s") from None
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        marker.write_text("\n".join(requirements) + "\n")
    return target
