"""The environment a run's scores came from (lock, packages, kubectl, Python, kernel, bubblewrap), and how two differ."""

from __future__ import annotations

import functools
import hashlib
import platform
import re
import shutil
import subprocess
from importlib import metadata
from typing import Any

from ..core.resources import PACKAGE

#: the fields whose difference can change a score (the digest covers every installed package besides)
SHOWN = ("lock", "packages", "kubectl", "networkx", "python", "kernel", "bubblewrap")


@functools.lru_cache(maxsize=1)
def _measured() -> tuple[tuple[str, Any], ...]:
    found = _measure()
    return tuple(found.items())


def fingerprint() -> dict[str, Any]:
    """What a score depends on outside the seed and the options (measured once per process)."""
    return dict(_measured())


def _measure() -> dict[str, Any]:
    """What a score depends on outside the seed and the options; `digest` sums the rest up in 16 hex digits."""
    found = {
        "lock": _lock_digest(),
        "packages": _packages_digest(),
        "kubectl": _kubectl_version(),
        "networkx": _version("networkx"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "kernel": platform.release(),
        "bubblewrap": _bubblewrap_version(),
    }
    found["digest"] = hashlib.sha256(repr(sorted(found.items())).encode()).hexdigest()[:16]
    return found


def differences(first: dict[str, Any] | None, second: dict[str, Any] | None) -> list[str]:
    """One line per field that differs ("kubectl: 1.37.1 vs 1.36.0"); a run without a fingerprint says so."""
    if not first or not second:
        return [] if first == second else ["fingerprint: recorded by one run only (an older version wrote the other)"]
    return [f"{key}: {first.get(key)} vs {second.get(key)}" for key in SHOWN if first.get(key) != second.get(key)]


def _lock_digest() -> str | None:
    """sha256 (16 digits) of the checkout's requirements.lock, when the package runs from a checkout that has one."""
    lock = PACKAGE.parent / "requirements.lock"
    return hashlib.sha256(lock.read_bytes()).hexdigest()[:16] if lock.is_file() else None


#: a Name or Version line of a distribution's metadata headers
_HEADER = re.compile(r"^(Name|Version):[ \t]*(.*?)[ \t]*$", re.M)


def _packages_digest() -> str:
    """sha256 (16 digits) of every installed distribution's name and version: what the lock meant, as installed."""
    names = sorted({_name_and_version(dist) for dist in metadata.distributions()})
    return hashlib.sha256("\n".join(names).encode()).hexdigest()[:16]


def _name_and_version(dist: metadata.Distribution) -> str:
    """"name==version" from the metadata's header block alone: `dist.metadata` parses the whole file as email
    (long descriptions included), a tenth of a second for a full environment, paid at every run's start."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    fields = dict(_HEADER.findall(text.split("\n\n", 1)[0]))
    return f"{fields.get('Name', '').lower()}=={fields.get('Version')}"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _kubectl_version() -> str | None:
    try:
        from ..kube.kubectl import kubectl_path

        out = subprocess.run([kubectl_path(), "version", "--client"], capture_output=True, text=True, timeout=20,
                             env={"KUBECONFIG": "/dev/null", "PATH": "/usr/bin:/bin"}).stdout
    except Exception:  # no kubectl is a fact about the run, not an error of it
        return None
    match = re.search(r"v\d+\.\d+\.\d+\S*", out)
    return match.group(0) if match else None


def _bubblewrap_version() -> str | None:
    binary = shutil.which("bwrap")
    if not binary:
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.split()[-1] if out.split() else None
