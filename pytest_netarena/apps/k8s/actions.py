"""Running one agent action: `bash -c SCRIPT` in a fresh sealed box that sees kubectl, text tools and a kubeconfig.

The box (pytest_netarena.sandbox) has no view of the harness's files, a private uid, no
capabilities, its own PID namespace (nothing it starts outlives it), resource limits and a bounded
output pipe. Its network is the one the backend names: for the embedded server, a namespace made
for this environment in which only the server listens; for a real cluster, the harness's own. The
kubeconfig is a read-only file of the box holding only the episode's namespace-scoped identity.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field

from ... import sandbox
from ...kube.kubectl import ONE_SHOT_GO, save_kubeconfig
from ...sandbox import views

KUBECONFIG_PATH = "/etc/kubeconfig"
#: the API discovery cache, filled once by the harness and read-only in every box (it names only the
#: server's resource types: without it every action would first download discovery again)
CACHE_PATH = "/usr/share/kubectl-cache"
KUBECTL_ENV = {"KUBECONFIG": KUBECONFIG_PATH, "KUBECACHEDIR": "/tmp/.kube/cache", **ONE_SHOT_GO}


@dataclass(frozen=True)
class ActionResult:
    """What one action printed (stdout and stderr interleaved, capped) and how it ended."""

    output: str
    returncode: int | None  #: None when it was stopped (time or output limit)
    timed_out: bool = False
    truncated: bool = False


class ActionRunner:
    """Runs agent actions for one environment: boxed, or (--unsandboxed) as plain processes."""

    def __init__(self, kubectl: str, sandboxed: bool = True, network: sandbox.NetNamespace | None = None,
                 binds: tuple[tuple[str, str], ...] = ()) -> None:
        self.kubectl = kubectl
        self.sandboxed = sandboxed
        self.network = network
        self.binds = binds
        self.programs = {**views.programs(views.SHELL_TOOLS), "kubectl": os.path.realpath(kubectl)}
        self._scratch: str | None = None
        self._cache: str | None = None
        self._cache_key: tuple[str, bytes] | None = None

    def spec(self, kubeconfig: bytes, timeout_s: float, limit: int) -> sandbox.BoxSpec:
        limits = sandbox.Limits(wall_s=timeout_s, output_bytes=limit)
        binds, env = self.binds, dict(KUBECTL_ENV)
        if self._cache is not None:
            binds = (*binds, (self._cache, CACHE_PATH))
            env["KUBECACHEDIR"] = CACHE_PATH
        return sandbox.BoxSpec(programs=self.programs, binds=binds, files={KUBECONFIG_PATH: kubeconfig},
                               network=self.network, env=env, limits=limits, hostname="operator")

    def run(self, script: str, kubeconfig: bytes, timeout_s: float, limit: int) -> ActionResult:
        """Run `bash -c script`; raises OSError when the box cannot start (an infrastructure failure)."""
        if self.sandboxed and self._cache_key is None:
            self._cache_key = (self.kubectl, kubeconfig)
            self._cache = DISCOVERY_CACHES.acquire(self._cache_key, self.network)
        spec = self.spec(kubeconfig, timeout_s, limit)
        argv = ["bash", "-c", script]
        if self.sandboxed:
            done = sandbox.run(spec, argv)
        else:
            done = sandbox.run_unboxed(self._unboxed(spec, kubeconfig), argv)
        return ActionResult(done.text, done.returncode, done.timed_out, done.truncated)

    def _unboxed(self, spec: sandbox.BoxSpec, kubeconfig: bytes) -> sandbox.BoxSpec:
        """--unsandboxed: the kubeconfig as a private file of the harness, a private kubectl cache."""
        if self._scratch is None:
            self._scratch = tempfile.mkdtemp(prefix="netarena-k8s-unboxed-")
        path = save_kubeconfig(os.path.join(self._scratch, "kubeconfig"), kubeconfig)
        env = {**spec.env, "KUBECONFIG": path, "KUBECACHEDIR": os.path.join(self._scratch, "cache"),
               "PATH": f"{os.path.dirname(os.path.realpath(self.kubectl))}:{views.HOST_PATH}"}
        return sandbox.BoxSpec(programs=spec.programs, network=spec.network, env=env, limits=spec.limits)

    def close(self) -> None:
        if self._cache_key is not None:
            DISCOVERY_CACHES.release(self._cache_key)
            self._cache_key = self._cache = None
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


class DiscoveryCaches:
    """kubectl discovery caches, one per (kubectl, kubeconfig), shared by a process's environments.

    Each is filled once by a harness-side kubectl (no agent text involved) and is read-only in
    every box. Embedded servers listen on the same address inside each environment's own network
    namespace, so all of a process's environments share one cache: the second and later ones cost
    no discovery download.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, bytes], _SharedCache] = {}

    def acquire(self, key: tuple[str, bytes], network: sandbox.NetNamespace | None) -> str | None:
        """The cache folder for this kubectl and kubeconfig (filled now if new); None if it cannot be filled."""
        with self._lock:
            entry = self._entries.setdefault(key, _SharedCache())
            entry.users += 1
        with entry.filling:  # the first user fills it; the others wait for that rather than fill it again
            if not entry.filled:
                entry.filled = True
                entry.folder = _fill_discovery_cache(*key, network)
        return entry.folder

    def users(self, key: tuple[str, bytes]) -> int:
        """How many runners use this cache now."""
        with self._lock:
            entry = self._entries.get(key)
            return entry.users if entry is not None else 0

    def release(self, key: tuple[str, bytes]) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return
            entry.users -= 1
            if entry.users > 0:
                return
            del self._entries[key]
        if entry.folder is not None:
            shutil.rmtree(os.path.dirname(entry.folder), ignore_errors=True)


@dataclass
class _SharedCache:
    folder: str | None = None
    users: int = 0
    filled: bool = False
    filling: threading.Lock = field(default_factory=threading.Lock)


def _fill_discovery_cache(kubectl: str, kubeconfig: bytes, network: sandbox.NetNamespace | None) -> str | None:
    folder = tempfile.mkdtemp(prefix="netarena-kubecache-")
    config = save_kubeconfig(os.path.join(folder, "kubeconfig"), kubeconfig)
    cache = os.path.join(folder, "cache")
    env = {"KUBECONFIG": config, "KUBECACHEDIR": cache, "HOME": folder}
    spec = sandbox.BoxSpec(network=network, env=env, limits=sandbox.Limits(wall_s=20))
    try:
        done = sandbox.run_unboxed(spec, [kubectl, "api-resources", "-o", "name"])
    except OSError:
        done = None
    os.unlink(config)
    if done is None or done.returncode != 0 or not os.path.isdir(cache):
        shutil.rmtree(folder, ignore_errors=True)  # actions still work, downloading discovery each time
        return None
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    os.chmod(folder, 0o755)
    return cache


DISCOVERY_CACHES = DiscoveryCaches()
