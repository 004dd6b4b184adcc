"""A control group per box: its memory, processes and CPU bounded together, and the group gone when the box ends.

Resource limits bound each process of a box; a box of many processes could still hold their sum. So
each box made as root gets a group of its own under this process's (cgroup v2, or v1's memory, pids
and cpu hierarchies): `memory` caps all its processes together (the kernel's out-of-memory killer
acts inside the box), `pids` counts every process and thread, `cpu` gives it at most `cpus` CPUs.
The box joins its group before it becomes the box (a shell shim writes its own pid, then execs), so
nothing it starts is ever outside; when it ends, whatever is left is killed and the group removed.

Where no group can be made (a plain user without a delegated hierarchy, or a cgroup v2 hierarchy whose
controllers cannot be enabled below this process's group), `available()` says why, and the per-process
limits hold alone: address space times processes.
"""

from __future__ import annotations

import atexit
import functools
import itertools
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PREFIX = "netarena-boxes-"
PERIOD_US = 100_000
V1_CONTROLLERS = ("memory", "pids", "cpu")
#: the shim a box starts through: it joins its groups (the arguments before `--`), then becomes the box
SHIM = ('while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || { echo "netarena: cannot join the box\'s control '
        'group $1" >&2; exit 125; }; shift; done; shift; exec "$@"')
_names = itertools.count()


def own_path(controller: str) -> str:
    """This process's group in a v1 controller's hierarchy, or in v2's unified one (controller "")."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if (controller == "" and controllers == "") or controller in controllers.split(","):
            return path
    return "/"


def write(path: Path, value: str) -> None:
    path.write_text(value)


@dataclass
class _Parents:
    """This process's groups that hold its boxes' groups: one per v1 hierarchy, or one in v2's."""

    version: int
    folders: list[Path]
    reason: str = ""
    owner: int = 0  #: the process that made them (a forked child shares them, and must not remove them)


@functools.lru_cache(maxsize=1)
def _parents() -> _Parents:
    if os.geteuid() != 0:
        return _Parents(0, [], "made without root: no control group can be made for each box")
    tag = f"{PREFIX}{os.getpid()}"
    made: list[Path] = []
    try:
        if (ROOT / "cgroup.controllers").exists():
            own = ROOT / own_path("").lstrip("/")
            enabled = set((own / "cgroup.subtree_control").read_text().split())
            if not {"memory", "pids", "cpu"} <= enabled:
                write(own / "cgroup.subtree_control", "+memory +pids +cpu")
            _remove_leftovers([own])
            parent = own / tag
            parent.mkdir(exist_ok=True)
            made.append(parent)
            write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
            version = 2
        else:
            owns = []
            for controller in V1_CONTROLLERS:
                if not (ROOT / controller).is_dir():
                    raise OSError(f"no cgroup v1 {controller} hierarchy at {ROOT / controller}")
                owns.append(ROOT / controller / own_path(controller).lstrip("/"))
            _remove_leftovers(owns)
            for own in owns:
                (own / tag).mkdir(exist_ok=True)
                made.append(own / tag)
            version = 1
    except OSError as error:
        for folder in made:
            remove_group(folder)
        return _Parents(0, [], f"cannot make control groups for the boxes: {error}")
    parents = _Parents(version, made, owner=os.getpid())
    atexit.register(_remove_parents, parents)
    return parents


def available() -> str:
    """"" when boxes get a control group each, else why not."""
    return _parents().reason


class BoxGroup:
    """One box's group (a folder per v1 hierarchy, or one in v2), with its limits written."""

    def __init__(self, memory_bytes: int, processes: int, cpus: float) -> None:
        parents = _parents()
        self.version = parents.version
        name = f"box-{os.getpid()}-{next(_names)}"  # a forked process counts on from its parent's count
        self.folders = [parent / name for parent in parents.folders]
        quota = f"{max(1000, int(cpus * PERIOD_US))}"
        try:
            for folder in self.folders:
                folder.mkdir()
            if self.version == 2:
                folder = self.folders[0]
                write(folder / "memory.max", str(memory_bytes))
                _try_write(folder / "memory.swap.max", "0")
                write(folder / "pids.max", str(processes))
                write(folder / "cpu.max", f"{quota} {PERIOD_US}")
            else:
                memory, pids, cpu = self.folders
                write(memory / "memory.limit_in_bytes", str(memory_bytes))
                _try_write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
                write(pids / "pids.max", str(processes))
                write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
                write(cpu / "cpu.cfs_quota_us", quota)
        except OSError:
            self.remove()
            raise

    def argv(self, argv: list[str]) -> list[str]:
        """argv started through the shim that puts it into this group first."""
        return ["/bin/sh", "-c", SHIM, "netarena-box", *map(str, self.folders), "--", *argv]

    def processes(self) -> set[int]:
        return members(self.folders)

    def peak_bytes(self) -> int | None:
        """The most memory the box held at once (what the kernel recorded), or None."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.folders[0] / name).read_text())
        except (OSError, ValueError, IndexError):
            return None

    def remove(self) -> None:
        """Kill whatever is left in the group, then remove it."""
        kill_members(self.folders)
        for folder in self.folders:
            remove_group(folder)


def make(memory_bytes: int, processes: int, cpus: float) -> BoxGroup | None:
    """A group for one box, or None where boxes get none (available() says why)."""
    if available():
        return None
    return BoxGroup(memory_bytes, processes, cpus)


def members(folders: Iterable[Path]) -> set[int]:
    """The processes in these groups (not below them)."""
    found: set[int] = set()
    for folder in folders:
        try:
            found.update(int(pid) for pid in (Path(folder) / "cgroup.procs").read_text().split())
        except OSError:
            continue
    return found


def kill_members(folders: Iterable[Path]) -> None:
    """SIGKILL every process in these groups, again until none is left (a dying shell may still fork); never this
    process (nothing of the harness should be there; if it were, not it)."""
    folders = list(folders)
    for attempt in range(200):
        left = members(folders) - {os.getpid()}
        if not left:
            return
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(_pause(attempt))


def tree(folder: Path) -> list[Path]:
    """folder and the groups below it, the deepest first (the order they can be removed in)."""
    return [Path(path) for path, _dirs, _ in os.walk(folder, topdown=False)] or [folder]


def _try_write(path: Path, value: str) -> None:
    try:
        write(path, value)
    except OSError:
        pass  # swap is not accounted here: nothing to cap


def _pause(attempt: int) -> float:
    """How long to wait before looking again: the box's last processes are usually gone within a millisecond."""
    return 0.001 if attempt < 20 else 0.01


def remove_group(folder: Path) -> None:
    """Remove an empty group, waiting a little for its last processes to be reaped."""
    for attempt in range(200):  # a group whose last process is still being reaped cannot go yet
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(_pause(attempt))


def _remove_parents(parents: _Parents) -> None:
    if parents.owner and parents.owner != os.getpid():
        return
    for parent in parents.folders:
        for child in (child for child in parent.iterdir() if child.is_dir()) if parent.is_dir() else ():
            remove_group(child)
        remove_group(parent)


def _remove_leftovers(owns: list[Path]) -> None:
    """Remove the groups of processes that died without removing theirs (their boxes died with them)."""
    for own in owns:
        try:
            leftovers = [folder for folder in own.iterdir() if folder.name.startswith(PREFIX)]
        except OSError:
            continue
        for folder in leftovers:
            try:
                owner = int(folder.name[len(PREFIX):])
            except ValueError:
                continue
            if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
                _remove_parents(_Parents(0, [folder]))

