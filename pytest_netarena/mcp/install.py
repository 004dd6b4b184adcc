"""CLI agents installed from npm at pinned versions, into a cache outside any checkout (never the repository).

Each package and version gets its own folder, `<cache>/<package>@<version>` with `/` as `+`, where the
cache is $NETARENA_NPM_CACHE or ~/.cache/pytest-netarena/npm. npm runs with --ignore-scripts (no
package's install script runs here); the programs are the native binaries of the platform packages.
An install goes to a staging folder renamed into place, so a half-done install is never used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..core.errors import UsageError


def cache_root() -> Path:
    configured = os.environ.get("NETARENA_NPM_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pytest-netarena" / "npm"


def installed_dir(package: str, version: str) -> Path:
    return cache_root() / f"{package.replace('/', '+')}@{version}"


def install(package: str, version: str, timeout_s: float = 600.0) -> Path:
    """The install folder of package@version, installed with npm when it is not there yet.

    Raises UsageError when npm is missing or the install fails (the message holds npm's last lines)."""
    target = installed_dir(package, version)
    if (target / "node_modules").is_dir():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise UsageError(f"cannot install {package}@{version}: npm is not installed (apt-get install npm)")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=target.parent))
    try:
        done = subprocess.run([npm, "install", "--prefix", str(staging), "--ignore-scripts", "--no-audit", "--no-fund",
                               "--no-save", "--loglevel=error", f"{package}@{version}"],
                              capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            tail = " | ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
            raise UsageError(f"npm could not install {package}@{version}: {tail}")
        try:
            staging.rename(target)
        except OSError:  # another process installed it first
            if not (target / "node_modules").is_dir():
                raise
    except subprocess.TimeoutExpired:
        raise UsageError(f"npm did not install {package}@{version} within {timeout_s:g} s") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
