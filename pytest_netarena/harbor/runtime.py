"""What one Harbor environment is on our provider, without Docker: a folder of Harbor's paths and a sealed box per command.

Three kinds of environment definition (`kind_of`): our exported task (environment/netarena/episode.json: its episode
service runs here in the harness, the sidecar's part, and each command's box reaches it at http://netarena:8765 on a
network namespace where nothing else listens); a k3s-layout live-cluster task (environment/scripts/bootstrap-cluster:
a fresh embedded API server stands in for k3s, the trusted bootstrap runs as `netarena kube task` runs it, and each
command's box is kube/harbor_box.py's, reaching only the task's API server); anything else (a separate verifier's
image of its own) is a box with no network. Every `exec` is a fresh box (bubblewrap) with Harbor's folders bound at
Harbor's paths; nothing a command started outlives it. A separate verifier of a k3s task is given the agent's cluster
after the agent's phase has ended (`park`/`adopt`), as `netarena kube task` runs its verifier.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from typing import TYPE_CHECKING

from .. import sandbox
from ..sandbox import views

if TYPE_CHECKING:
    from ..sandbox import NetNamespace, UserNetNamespace
    from ..serving import Listener
    from .cluster import TaskCluster
    from .service import EpisodeService

#: Harbor's writable top-level paths, each a folder of the environment's own
FOLDERS = ("app", "logs", "tests", "solution", "installed-agent")
#: a box of its own (a separate verifier) also has /netarena: Harbor uploads the sidecar's verdict artifact to the path
#: it was collected from, /netarena/verdict
PLAIN_FOLDERS = (*FOLDERS, "netarena")
#: what Harbor's containers have mounted under /logs from the start (it writes there without making them)
LOG_FOLDERS = ("agent", "verifier", "artifacts")
PROGRAMS = (*views.SHELL_TOOLS, "curl", "jq", "tar", "gzip")
PATH = "/usr/local/bin:/usr/bin:/bin"
HOSTS = b"127.0.0.1 localhost netarena\n::1 localhost\n"
DEFAULT_TIMEOUT_S = 600.0
#: k3s tasks parked after their agent's phase for their separate verifier, by trial name
_PARKED: dict[str, Runtime] = {}
_PARKED_LOCK = threading.Lock()


class DefinitionError(ValueError):
    """An environment folder this provider cannot run."""


def kind_of(environment_dir: Path) -> str:
    if (environment_dir / "netarena" / "episode.json").is_file():
        return "exported"
    if (environment_dir / "scripts" / "bootstrap-cluster").is_file():
        return "k3s"
    return "plain"


def trial_of(session_id: str) -> str:
    """The trial a Harbor session id belongs to (`T__env`, `T__verifier__KEY`)."""
    return session_id.split("__verifier__")[0].removesuffix("__env")


def separate_verifier(task_dir: Path) -> bool:
    try:
        config = tomllib.loads((task_dir / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return (config.get("verifier") or {}).get("environment_mode") == "separate"


@dataclass
class Done:
    stdout: str
    returncode: int


class Runtime:
    """One environment's folders, its service or cluster, and how a command runs in it."""

    def __init__(self, environment_dir: Path, session_id: str) -> None:
        self.environment_dir = environment_dir.resolve()
        self.session_id = session_id
        self.kind = kind_of(self.environment_dir)
        self.root = Path(tempfile.mkdtemp(prefix="netarena-harbor-"))
        self.uid = sandbox.private_uid() if sandbox.support().root else os.getuid()
        self.service: EpisodeService | None = None
        self.listener: Listener | None = None
        self.network: NetNamespace | UserNetNamespace | None = None
        self.task_run: TaskCluster | None = None  #: a k3s task's server, pods and work folder (kube/harbor.py)
        self.parked = False
        self.folders = PLAIN_FOLDERS if self.kind == "plain" else FOLDERS
        for name in self.folders:
            (self.root / name).mkdir()
        for name in LOG_FOLDERS:
            (self.root / "logs" / name).mkdir()

    # ----- life -------------------------------------------------------------------------------------------------

    def start(self) -> None:
        problem = sandbox.support()
        if not problem.ok:
            raise DefinitionError(f"commands run in sealed boxes, which cannot be made here: {problem.reason}")
        if self.kind == "exported":
            self._start_service()
        elif self.kind == "k3s":
            adopted = self._adopt()
            if not adopted:
                from .cluster import TaskCluster

                self.task_run = TaskCluster(self.environment_dir.parent).start()
        elif self.environment_dir.name == "tests" and "COPY . /tests/" in _text(self.environment_dir / "Dockerfile"):
            shutil.copytree(self.environment_dir, self.root / "tests", dirs_exist_ok=True)  # the verifier's image

    def _start_service(self) -> None:
        import socket

        from ..serving import Listener
        from .service import PORT, EpisodeFile, EpisodeService, routes

        service = self.service = EpisodeService(EpisodeFile.read(self.environment_dir / "netarena" / "episode.json"))
        network = self.network = sandbox.new_network_namespace()
        sock = network.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", PORT))
        sock.listen(64)
        self.listener = Listener(routes(service, [f"netarena:{PORT}", f"127.0.0.1:{PORT}", f"localhost:{PORT}"]),
                                 [sock], lifespan=True, log_level="critical", name="netarena-harbor").start()

    def stop(self) -> None:
        if self.kind == "k3s" and self.task_run is not None and not self.parked \
                and "__verifier__" not in self.session_id and separate_verifier(self.environment_dir.parent):
            self.parked = True  # its separate verifier runs on this cluster next (adopt)
            with _PARKED_LOCK:
                _PARKED[trial_of(self.session_id)] = self
            shutil.rmtree(self.root, ignore_errors=True)
            return
        self.close()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.stop()
            self.listener = None
        if self.service is not None:
            self.service.close()
        if self.network is not None:
            self.network.close()
            self.network = None
        if self.task_run is not None:
            self.task_run.stop()
            self.task_run = None
        shutil.rmtree(self.root, ignore_errors=True)

    def _adopt(self) -> bool:
        if "__verifier__" not in self.session_id:
            return False
        with _PARKED_LOCK:
            parked = _PARKED.pop(trial_of(self.session_id), None)
        if parked is None:
            return False
        self.task_run, parked.task_run = parked.task_run, None
        return True

    # ----- files ------------------------------------------------------------------------------------------------

    def host_path(self, path: str) -> Path:
        """Where a path of the environment is on the host (only Harbor's folders exist)."""
        parts = PurePosixPath(path).parts
        if len(parts) < 2 or parts[0] != "/" or ".." in parts:
            raise DefinitionError(f"{path}: only paths under /{', /'.join(self.folders)} exist here")
        top = parts[1]
        if top not in self.folders:
            raise DefinitionError(f"{path}: only paths under /{', /'.join(self.folders)} exist here")
        return self.root.joinpath(top, *parts[2:])

    def service_path(self, path: str) -> Path:
        """The sidecar's folder of the verdict, written by `service_exec`."""
        from .templates import SIDECAR_VERDICT

        if path.rstrip("/") != SIDECAR_VERDICT:
            raise DefinitionError(f"the netarena service has only {SIDECAR_VERDICT}")
        return self.root / "sidecar-verdict"

    # ----- commands ---------------------------------------------------------------------------------------------

    def exec(self, command: str, cwd: str | None, env: dict[str, str], timeout_s: float | None) -> Done:
        wall = float(timeout_s or DEFAULT_TIMEOUT_S)
        argv = ("bash", "-c", 'cd "$1" 2>/dev/null || cd /app; exec bash -c "$0"', command, cwd or "/app")
        writable = tuple((str(self.root / name), f"/{name}") for name in self.folders)
        if self.kind == "k3s" and self.task_run is not None:
            finished = self.task_run.run(argv, env, wall, writable)
        else:
            finished = self._box(argv, env, wall, writable)
        text = finished.text
        if finished.timed_out:
            text += f"\n[stopped after {wall:g} s]"
        return Done(text, 124 if finished.returncode is None else finished.returncode)

    def _box(self, argv, env: dict[str, str], wall: float, writable):
        from ..kube.harbor_box import _own

        for folder, _ in writable:
            _own(folder, self.uid)
        programs = views.programs(PROGRAMS)
        if self.kind == "exported":  # the task's own commands (netarena-act, kubectl), in /usr/bin beside the others
            programs.update({path.name: str(path) for path in sorted((self.environment_dir / "bin").iterdir())
                             if path.is_file()})
        spec = sandbox.BoxSpec(
            programs=programs, writable=writable, network=self.network,
            files={"/etc/hosts": HOSTS}, env={**env, "PATH": PATH}, hostname="main", uid=self.uid,
            limits=sandbox.Limits(wall_s=wall, cpu_s=int(wall) + 1, processes=128, file_bytes=64 << 20,
                                  open_files=1024, output_bytes=1 << 20, tmp_bytes=64 << 20))
        return sandbox.run(spec, argv)

    def service_exec(self, command: str) -> Done:
        """A command of the task's `netarena` service: only its collect hook, which writes the verdict."""
        from .templates import VERDICT_COMMAND

        if self.service is None or command.strip() != VERDICT_COMMAND:
            return Done(f"this provider runs the netarena service in the harness; it takes only `{VERDICT_COMMAND}`",
                        127)
        verdict = self.service.write_verdict(self.root / "sidecar-verdict")
        return Done(f"{verdict['outcome']}\n", 0)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
