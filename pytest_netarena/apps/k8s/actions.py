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
from dataclasses import dataclass

from ... import sandbox
from ...sandbox import views

KUBECONFIG_PATH = "/etc/kubeconfig"
#: kubectl is a Go program: no garbage collection in a process that lives for one command is faster,
#: and the box's memory limit still bounds it
KUBECTL_ENV = {"KUBECONFIG": KUBECONFIG_PATH, "KUBECACHEDIR": "/tmp/.kube/cache", "GOGC": "off"}


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

    def spec(self, kubeconfig: bytes, timeout_s: float, limit: int) -> sandbox.BoxSpec:
        limits = sandbox.Limits(wall_s=timeout_s, output_bytes=limit)
        return sandbox.BoxSpec(programs=self.programs, binds=self.binds, files={KUBECONFIG_PATH: kubeconfig},
                               network=self.network, env=KUBECTL_ENV, limits=limits, hostname="operator")

    def run(self, script: str, kubeconfig: bytes, timeout_s: float, limit: int) -> ActionResult:
        """Run `bash -c script`; raises OSError when the box cannot start (an infrastructure failure)."""
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
        path = os.path.join(self._scratch, "kubeconfig")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(kubeconfig)
        env = {**spec.env, "KUBECONFIG": path, "KUBECACHEDIR": os.path.join(self._scratch, "cache"),
               "PATH": f"{os.path.dirname(os.path.realpath(self.kubectl))}:{views.HOST_PATH}"}
        return sandbox.BoxSpec(programs=spec.programs, network=spec.network, env=env, limits=spec.limits)

    def close(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
