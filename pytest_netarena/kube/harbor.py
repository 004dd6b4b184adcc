"""`netarena kube task DIR`: a Harbor-layout live-cluster task written for k3s, run against the embedded server.

A task folder holds task.toml, instruction.md, environment/ (scripts/bootstrap-cluster, the manifests it
applies under workspace/bootstrap), solution/solve.sh and tests/test.sh. In Harbor its containers mount
the bootstrap manifests at /bootstrap, the agent's kubeconfig volume at /kube, k3s's admin kubeconfig at
/admin-kube, and the tests, solution and logs at /tests, /solution and /logs; since 2026 its verifier runs
in a sandbox of its own. Here the trusted phases (the bootstrap, with the admin client certificate, and the
reference solution) run on the host, with each mount point rewritten to its folder in a work folder. The
agent and the verifier each run in a sealed box of their own (kube/harbor_box.py) that sees Harbor's paths
as they are: the agent its workspace /app and its kubeconfig /kube; the verifier /tests, /kube, /app read-only
and /logs, the only place a reward comes from. Tests, solution and admin credentials are on no path the agent
can reach, and nothing it started runs once its phase has ended.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import harbor_box

#: Harbor's mount points -> where they are in the work folder (relative to it)
MOUNTS = {"/admin-kube": "admin-kube", "/bootstrap": "task/environment/workspace/bootstrap", "/kube": "kube",
          "/tests": "task/tests", "/solution": "task/solution", "/logs": "logs", "/app": "app"}
#: what the agent never sees (Harbor copies them in only for the oracle and the verifier)
HIDDEN = ("tests", "solution")
ADMIN_KUBECONFIG = "/admin-kube/admin-kubeconfig.yaml"
#: a mount point as a whole path component: not inside a longer path or word ("/kube" but not "/kubectl")
_MOUNT = re.compile(r"(?<![\w./-])(/admin-kube|/bootstrap|/kube|/tests|/solution|/logs|/app)"
                    r"(?=[/\s\"'`:;)}|]|$)")
#: the folders whose scripts are rewritten for the host phases; manifests are not (a pod's command runs in the
#: pod, where /tmp and the rest are its own), nor files over MAX_TEXT bytes or not UTF-8; tests are not either
#: (the verifier's box sees Harbor's paths)
SCRIPT_FOLDERS = ("environment/scripts", "solution")
MAX_TEXT = 4 << 20
DEFAULT_TIMEOUT_S = 600.0
#: the work folder's folder the verifier's box sees as /logs (its reward is read from verifier/ in it)
VERDICT = "verdict"


class TaskError(ValueError):
    """A folder that is not a runnable task (exit status 2)."""


@dataclass
class PhaseRun:
    name: str
    returncode: int | None
    seconds: float
    log: str  #: the phase's output (stdout and stderr)


@dataclass
class TaskResult:
    task: str
    reward: float | None = None  #: what tests/test.sh wrote to /logs/verifier/reward.txt in its box (None: nothing)
    phases: list[PhaseRun] = field(default_factory=list)
    folder: str = ""
    mode: str = "api-only"  #: "live" when pods ran (exec, logs, a data plane), as EmbeddedAPIServer.mode says

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.reward >= 1.0


def rewrite(text: str, work: Path) -> str:
    """text with each Harbor mount point replaced by its folder under work."""
    return _MOUNT.sub(lambda m: str(work / MOUNTS[m.group(1)]), text)


def load_task(folder: Path) -> dict:
    """task.toml of a task folder, checked for the parts this runner needs."""
    if not (folder / "task.toml").is_file():
        raise TaskError(f"{folder} is not a Harbor task: no task.toml")
    try:
        config = tomllib.loads((folder / "task.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise TaskError(f"{folder / 'task.toml'}: {error}") from None
    for needed in ("environment/scripts/bootstrap-cluster", "tests/test.sh", "solution/solve.sh"):
        if not (folder / needed).is_file():
            raise TaskError(f"{folder} is not a live-cluster task: no {needed}")
    return config


def _env_table(config: dict, section: str) -> dict[str, str]:
    table = (config.get(section) or {}).get("env") or {}
    return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}


def _timeout(config: dict, section: str) -> float:
    value = (config.get(section) or {}).get("timeout_sec")
    return float(value) if isinstance(value, (int, float)) and value > 0 else DEFAULT_TIMEOUT_S


def prepare(folder: Path, work: Path) -> None:
    """Copy the task into work/task with its mount points rewritten for the host phases, keep its tests and
    solution apart (work/hidden), its environment scripts as written for the boxes (work/local/bin), and make the
    mounted folders."""
    shutil.copytree(folder, work / "task", symlinks=True)
    if (folder / "environment/scripts").is_dir():
        shutil.copytree(folder / "environment/scripts", work / "local/bin", symlinks=True)
    else:
        (work / "local/bin").mkdir(parents=True)
    scripts = [p for sub in SCRIPT_FOLDERS if (work / "task" / sub).is_dir() for p in (work / "task" / sub).rglob("*")]
    for path in scripts:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_TEXT:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        changed = rewrite(text, work)
        if changed != text:
            path.write_text(changed, encoding="utf-8")
        path.chmod(path.stat().st_mode | 0o755)
    for relative in MOUNTS.values():
        (work / relative).mkdir(parents=True, exist_ok=True)
    for relative in ("home", "hidden", VERDICT):
        (work / relative).mkdir(parents=True, exist_ok=True)
    for name in HIDDEN:
        (work / "task" / name).rename(work / "hidden" / name)
    for relative in ("local", "hidden/tests"):
        harbor_box.readable(str(work / relative))


def copy_app(work: Path) -> None:
    """The task's images COPY environment/workspace/app/ into /app: so does this (after /app's tmpfs is mounted)."""
    app = work / "task" / "environment" / "workspace" / "app"
    if app.is_dir() and not app.is_symlink():
        shutil.copytree(app, work / "app", symlinks=True, dirs_exist_ok=True)


def _reveal(work: Path, name: str) -> None:
    """Put solution/ in place for the host's oracle (Harbor copies it in for the oracle alone)."""
    shutil.rmtree(work / "task" / name, ignore_errors=True)
    (work / "hidden" / name).rename(work / "task" / name)


def run_task(folder: str | os.PathLike, agent: str | None = None, solution: bool = False,
             keep: bool = False, work: str | None = None, echo=None, pods=None) -> TaskResult:
    """Bootstrap the task on a fresh embedded server, run the agent command (boxed) or the solution (or nothing:
    the broken state), then the verifier (boxed); the reward is what tests/test.sh wrote to /logs/verifier.

    pods: pods(server) starts what runs the server's pods and returns it (stopped at the end), or None
    where pods cannot run (cluster.start_live); without it pods are stored, never run (no exec).
    TaskError when the folder is no task, or when boxes cannot be made here."""
    from .kubectl import kubectl_path, save_kubeconfig
    from .server import EmbeddedAPIServer

    source = Path(folder).resolve()
    config = load_task(source)
    unboxable = harbor_box.available()
    if unboxable:
        raise TaskError(unboxable)
    root = Path(work) if work else Path(tempfile.mkdtemp(prefix="netarena-task-"))
    result = TaskResult(str(source), folder=str(root))
    server = runtime = None
    workspace = False
    try:
        prepare(source, root)
        workspace = harbor_box.mount_workspace(str(root / "app"))
        copy_app(root)
        from .k3s import from_compose

        nodes, profile = from_compose(source) or (None, None)  # the k3s services the task declares
        server = EmbeddedAPIServer(tls=True, audit_log=str(root / "logs" / "audit.jsonl"), nodes=nodes,
                                   profile=profile).start()
        server.wait_ready()
        runtime = pods(server) if pods is not None else None
        result.mode = server.mode
        kubectl = kubectl_path()
        save_kubeconfig(rewrite(ADMIN_KUBECONFIG, root), server.kubeconfig())
        base = {"PATH": os.pathsep.join([str(root / "task/environment/scripts"),
                                         os.path.dirname(kubectl), os.environ.get("PATH", "/usr/bin:/bin")]),
                "HOME": str(root / "home"), "TMPDIR": str(root / "home"), "LANG": "C.UTF-8"}
        declared = _env_table(config, "environment")

        def record(step: PhaseRun) -> PhaseRun:
            result.phases.append(step)
            if echo is not None:
                echo(step)
            return step

        def on_host(name: str, argv: list[str], env: dict[str, str], timeout: float) -> PhaseRun:
            started = time.monotonic()
            try:
                done = subprocess.run(argv, env={**base, **env}, cwd=str(root / "app"), capture_output=True,
                                      text=True, errors="replace", timeout=timeout)
                code, log = done.returncode, done.stdout + done.stderr
            except subprocess.TimeoutExpired as error:
                code, log = None, f"{error.stdout or ''}{error.stderr or ''}\n[stopped after {timeout:g} s]"
            return record(PhaseRun(name, code, time.monotonic() - started, log if isinstance(log, str) else str(log)))

        def boxed(name: str, phase: harbor_box.Phase) -> PhaseRun:
            started = time.monotonic()
            cache = root / "home/.kube/cache"  # what the bootstrap's kubectl discovered (a box only reads it)
            if cache.is_dir():
                harbor_box.readable(str(cache))
            ended = harbor_box.run(server, server.port, phase, kubectl, str(root / "local"),
                                   str(cache) if cache.is_dir() else None)
            done = ended.finished
            log = done.text
            if done.timed_out:
                log += f"\n[stopped after {phase.wall_s:g} s]"
            elif done.truncated:
                log += f"\n[stopped: more than {harbor_box.OUTPUT_BYTES} bytes of output]"
            return record(PhaseRun(name, done.returncode, time.monotonic() - started, log))

        bootstrap = on_host("bootstrap", [str(root / "task/environment/scripts/bootstrap-cluster")],
                            {"KUBECONFIG": rewrite(ADMIN_KUBECONFIG, root)}, _timeout(config, "environment"))
        if bootstrap.returncode != 0:
            return result
        kube = (str(root / "kube"), "/kube")
        if solution:
            _reveal(root, "solution")
            on_host("solution", ["bash", str(root / "task/solution/solve.sh")],
                    {**{k: rewrite(v, root) for k, v in {**declared, **_env_table(config, "solution")}.items()}},
                    _timeout(config, "agent"))
        elif agent:
            boxed("agent", harbor_box.Phase(("bash", "-c", 'cd /app && exec bash -c "$1"', "bash", agent), declared,
                                            _timeout(config, "agent"), binds=(kube,),
                                            writable=((str(root / "app"), "/app"),)))
        verdict = root / VERDICT
        boxed("verifier", harbor_box.Phase(("bash", "-c", "cd /app && exec bash /tests/test.sh"),
                                           {**declared, **_env_table(config, "verifier")}, _timeout(config, "verifier"),
                                           binds=(kube, (str(root / "app"), "/app"), (str(root / "hidden/tests"),
                                                                                      "/tests")),
                                           writable=((str(verdict), "/logs"),), hostname="verifier"))
        result.reward = read_reward(verdict / "verifier")
        return result
    finally:
        if runtime is not None:
            runtime.stop()
        if server is not None:
            server.stop()
        if workspace:  # a kept work folder keeps the workspace as the agent left it
            if keep:
                shutil.copytree(root / "app", root / "app.kept", symlinks=True)
            harbor_box.unmount_workspace(str(root / "app"))
            if keep:
                shutil.copytree(root / "app.kept", root / "app", symlinks=True, dirs_exist_ok=True)
                shutil.rmtree(root / "app.kept", ignore_errors=True)
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def read_reward(folder: Path) -> float | None:
    """The verifier's reward.txt (a number from 0 to 1), or None when it wrote none that reads (a link, a fifo or
    anything but a regular file is none)."""
    try:
        fd = os.open(folder / "reward.txt", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        text = os.read(fd, 64).decode("utf-8", "replace").strip()
    finally:
        os.close(fd)
    try:
        reward = float(text)
    except ValueError:
        return None
    return reward if math.isfinite(reward) else None
