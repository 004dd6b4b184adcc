"""A k3s-layout Harbor task's cluster on our provider: a fresh embedded API server in place of k3s.

The task's trusted bootstrap runs on the host, and each command in kube/harbor_box.py's box, which reaches only this
server."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..kube.server import EmbeddedAPIServer


class TaskCluster:
    """The embedded server, its pods where they can run, and the task's work folder (kube/harbor.py's layout)."""

    def __init__(self, task_dir: Path) -> None:
        self.task_dir = task_dir
        self.work = Path(tempfile.mkdtemp(prefix="netarena-harbor-k3s-"))
        self.server: EmbeddedAPIServer | None = None
        self.runtime: Any = None  #: the LiveCluster running the pods, where they can run
        self.kubectl = ""

    def start(self) -> TaskCluster:
        from ..kube import harbor
        from ..kube.cli import pods_starter
        from ..kube.kubectl import kubectl_path, save_kubeconfig
        from ..kube.server import EmbeddedAPIServer

        config = harbor.load_task(self.task_dir)
        try:
            from ..kube.k3s import from_compose

            harbor.prepare(self.task_dir, self.work)
            harbor.copy_app(self.work)
            nodes, profile = from_compose(self.task_dir) or (None, None)  # the k3s services the task declares
            server = self.server = EmbeddedAPIServer(tls=True, audit_log=str(self.work / "logs" / "audit.jsonl"),
                                                     nodes=nodes, profile=profile).start()
            server.wait_ready()
            self.runtime = pods_starter("auto")(server)
            self.kubectl = kubectl_path()
            admin = harbor.rewrite(harbor.ADMIN_KUBECONFIG, self.work)
            save_kubeconfig(admin, server.kubeconfig())
            env = {"PATH": os.pathsep.join([str(self.work / "task/environment/scripts"), os.path.dirname(self.kubectl),
                                            os.environ.get("PATH", "/usr/bin:/bin")]),
                   "HOME": str(self.work / "home"), "TMPDIR": str(self.work / "home"), "LANG": "C.UTF-8",
                   "KUBECONFIG": admin}
            done = subprocess.run([str(self.work / "task/environment/scripts/bootstrap-cluster")], env=env,
                                  cwd=str(self.work / "app"), capture_output=True, text=True, errors="replace",
                                  timeout=harbor._timeout(config, "environment"))
            if done.returncode != 0:
                raise RuntimeError(f"the task's bootstrap failed: {(done.stdout + done.stderr)[-2000:]}")
        except BaseException:
            self.stop()
            raise
        return self

    def run(self, argv, env: dict[str, str], wall_s: float, writable):
        """One command in a fresh box whose network holds only this server (the task's kubeconfig names it)."""
        from ..kube import harbor_box

        if self.server is None:
            raise RuntimeError("the task's cluster is not started")
        cache = self.work / "home/.kube/cache"
        if cache.is_dir():
            harbor_box.readable(str(cache))
        phase = harbor_box.Phase(tuple(argv), env, wall_s, binds=((str(self.work / "kube"), "/kube"),),
                                 writable=tuple(writable))
        return harbor_box.run(self.server, self.server.port, phase, self.kubectl, str(self.work / "local"),
                              str(cache) if cache.is_dir() else None).finished

    def stop(self) -> None:
        if self.runtime is not None:
            self.runtime.stop()
            self.runtime = None
        if self.server is not None:
            self.server.stop()
            self.server = None
        shutil.rmtree(self.work, ignore_errors=True)
