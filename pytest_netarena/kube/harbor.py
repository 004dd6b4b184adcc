"""`netarena kube task DIR`: a Harbor-layout live-cluster task written for k3s, run against the embedded server.

A task folder holds task.toml, instruction.md, environment/ (scripts/bootstrap-cluster, the manifests it
applies under workspace/bootstrap), solution/solve.sh and tests/test.sh. In Harbor its containers mount
the bootstrap manifests at /bootstrap, the agent's kubeconfig volume at /kube, k3s's admin kubeconfig at
/admin-kube, and the tests, solution and logs at /tests, /solution and /logs. Here those absolute paths
are the only thing changed: the task is copied to a work folder and each mount point is rewritten to its
folder there; the scripts then run as they are, with environment/scripts on PATH and kubectl talking
https to an embedded server (admin client certificate for the bootstrap, the task's ServiceAccount token
for the agent, the solution and the verifier, as the task itself arranges).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

#: Harbor's mount points -> where they are in the work folder (relative to it)
MOUNTS = {"/admin-kube": "admin-kube", "/bootstrap": "task/environment/workspace/bootstrap", "/kube": "kube",
          "/tests": "task/tests", "/solution": "task/solution", "/logs": "logs", "/app": "app"}
#: what the agent must not see before its turn ends (Harbor copies them in only for the oracle and the verifier)
HIDDEN = ("tests", "solution")
ADMIN_KUBECONFIG = "/admin-kube/admin-kubeconfig.yaml"
#: a mount point as a whole path component: not inside a longer path or word ("/kube" but not "/kubectl")
_MOUNT = re.compile(r"(?<![\w./-])(/admin-kube|/bootstrap|/kube|/tests|/solution|/logs|/app)"
                    r"(?=[/\s\"'`:;)}|]|$)")
#: the folders whose scripts are rewritten; manifests are not (a pod's command runs in the pod, where /tmp
#: and the rest are its own), nor files over MAX_TEXT bytes or not UTF-8
SCRIPT_FOLDERS = ("environment/scripts", "tests", "solution")
MAX_TEXT = 4 << 20
DEFAULT_TIMEOUT_S = 600.0


class TaskError(ValueError):
    """A folder that is not a runnable task (exit status 2)."""


@dataclass
class Phase:
    name: str
    returncode: int | None
    seconds: float
    log: str  #: the phase's output (stdout and stderr)


@dataclass
class TaskResult:
    task: str
    reward: float | None = None  #: what tests/test.sh wrote to /logs/verifier/reward.txt (None: nothing)
    phases: list[Phase] = field(default_factory=list)
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
    """Copy the task into work/task with its mount points rewritten, and make the mounted folders."""
    shutil.copytree(folder, work / "task", symlinks=True)
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
    app = work / "task" / "environment" / "workspace" / "app"
    if app.is_dir() and not app.is_symlink():  # the task's images COPY workspace/app/ into /app
        shutil.copytree(app, work / "app", symlinks=True, dirs_exist_ok=True)
    (work / "home").mkdir(exist_ok=True)
    (work / "hidden").mkdir(exist_ok=True)
    for name in HIDDEN:
        (work / "task" / name).rename(work / "hidden" / name)


def _reveal(work: Path, name: str) -> None:
    """Put tests/ or solution/ in place (Harbor copies them in after the agent's turn)."""
    shutil.rmtree(work / "task" / name, ignore_errors=True)  # whatever the agent put there
    (work / "hidden" / name).rename(work / "task" / name)


def run_task(folder: str | os.PathLike, agent: str | None = None, solution: bool = False,
             keep: bool = False, work: str | None = None, echo=None, pods=None) -> TaskResult:
    """Bootstrap the task on a fresh embedded server, run the agent command or the solution (or nothing: the
    broken state), then the verifier; the reward is what tests/test.sh wrote.

    pods: pods(server) starts what runs the server's pods and returns it (stopped at the end), or None
    where pods cannot run (cluster.start_live); without it pods are stored, never run (no exec)."""
    from .kubectl import kubectl_path, save_kubeconfig
    from .server import EmbeddedAPIServer

    source = Path(folder).resolve()
    config = load_task(source)
    root = Path(work) if work else Path(tempfile.mkdtemp(prefix="netarena-task-"))
    result = TaskResult(str(source), folder=str(root))
    server = runtime = None
    try:
        prepare(source, root)
        from .k3s import from_compose

        nodes, profile = from_compose(source) or (None, None)  # the k3s services the task declares
        server = EmbeddedAPIServer(tls=True, audit_log=str(root / "logs" / "audit.jsonl"), nodes=nodes,
                                   profile=profile).start()
        server.wait_ready()
        runtime = pods(server) if pods is not None else None
        result.mode = server.mode
        save_kubeconfig(rewrite(ADMIN_KUBECONFIG, root), server.kubeconfig())
        base = {"PATH": os.pathsep.join([str(root / "task/environment/scripts"),
                                         os.path.dirname(kubectl_path()), os.environ.get("PATH", "/usr/bin:/bin")]),
                "HOME": str(root / "home"), "TMPDIR": str(root / "home"), "LANG": "C.UTF-8"}
        environment = {k: rewrite(v, root) for k, v in _env_table(config, "environment").items()}

        def phase(name: str, argv: list[str], env: dict[str, str], timeout: float) -> Phase:
            started = time.monotonic()
            try:
                done = subprocess.run(argv, env={**base, **env}, cwd=str(root / "app"), capture_output=True,
                                      text=True, errors="replace", timeout=timeout)
                code, log = done.returncode, done.stdout + done.stderr
            except subprocess.TimeoutExpired as error:
                code, log = None, f"{error.stdout or ''}{error.stderr or ''}\n[stopped after {timeout:g} s]"
            step = Phase(name, code, time.monotonic() - started, log if isinstance(log, str) else str(log))
            result.phases.append(step)
            if echo is not None:
                echo(step)
            return step

        bootstrap = phase("bootstrap", [str(root / "task/environment/scripts/bootstrap-cluster")],
                          {"KUBECONFIG": rewrite(ADMIN_KUBECONFIG, root)}, _timeout(config, "environment"))
        if bootstrap.returncode != 0:
            return result
        if solution:
            _reveal(root, "solution")
            phase("solution", ["bash", str(root / "task/solution/solve.sh")],
                  {**environment, **{k: rewrite(v, root) for k, v in _env_table(config, "solution").items()}},
                  _timeout(config, "agent"))
        elif agent:
            phase("agent", ["bash", "-c", agent], environment, _timeout(config, "agent"))
        _reveal(root, "tests")
        verifier = root / "logs" / "verifier"
        shutil.rmtree(verifier, ignore_errors=True)  # nothing the agent left there counts
        verifier.mkdir(parents=True)
        phase("verifier", ["bash", str(root / "task/tests/test.sh")],
              {**environment, **{k: rewrite(v, root) for k, v in _env_table(config, "verifier").items()}},
              _timeout(config, "verifier"))
        result.reward = read_reward(verifier)
        return result
    finally:
        if runtime is not None:
            runtime.stop()
        if server is not None:
            server.stop()
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def read_reward(folder: Path) -> float | None:
    """The verifier's reward.txt (a number from 0 to 1), or None when it wrote none that reads."""
    try:
        text = (folder / "reward.txt").read_text(encoding="utf-8", errors="replace")[:64].strip()
        return float(text)
    except (OSError, ValueError):
        return None
