"""Control groups bounding the pods together and one by one: CPU time per period, memory, number of processes.

Boxes already cap each process (address space, CPU seconds) and each pod's uid (processes); a cgroup
adds what per-process limits cannot: the pods' share of the machine's CPU and their total memory.
Both cgroup versions are handled; where none can be made (no delegation), `Groups.reason` says why
and only the per-process bounds apply. A box is put into its group before it starts (the launch shim
writes its own pid, then execs the box), so nothing it forks is ever outside.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from ..sandbox.cgroups import kill_members, own_path, remove_group, tree, write

ROOT = Path("/sys/fs/cgroup")
#: what all pods of one cluster may use together
CLUSTER_CPU = 1.0  #: CPUs
CLUSTER_MEMORY = 2 << 30
CLUSTER_PIDS = 2048
#: what one pod may use unless its containers' limits say less
POD_CPU = 0.5
POD_MEMORY = 512 << 20
POD_PIDS = 128
PERIOD_US = 100_000
_names = itertools.count()

#: the shim a box is started through: it joins its groups, then becomes the box (same pid); with umask 002, so what
#: a pod writes the pods' common group (boxes.POD_GID) may write too
SHIM = 'umask 002; for g in $NETARENA_CGROUPS; do echo $$ > "$g/cgroup.procs" || exit 125; done; exec "$@"'


class Groups:
    """One cluster's cgroups: a parent bounding every pod, a child per pod."""

    def __init__(self) -> None:
        self.version = 0
        self.reason = ""
        self.parents: list[Path] = []
        tag = f"netarena-pods-{os.getpid()}-{next(_names)}"
        try:
            if (ROOT / "cgroup.controllers").exists():
                self._make_v2(tag)
            else:
                self._make_v1(tag)
        except OSError as error:
            self.remove()
            self.parents, self.version = [], 0
            self.reason = f"cannot make control groups: {error}"

    def _make_v1(self, tag: str) -> None:
        for controller in ("cpu", "memory", "pids"):
            if not (ROOT / controller).is_dir():
                raise OSError(f"no cgroup v1 {controller} hierarchy at {ROOT / controller}")
        # cpuacct (CPU time used, for the pods' metrics) where it is a hierarchy of its own, not cpu's
        accounting = (ROOT / "cpuacct").is_dir() and not (ROOT / "cpu" / "cpuacct.usage").exists()
        for controller in ("cpu", "memory", "pids", *(("cpuacct",) if accounting else ())):
            parent = ROOT / controller / own_path(controller).lstrip("/") / tag
            parent.mkdir()
            self.parents.append(parent)
        cpu, memory, pids = self.parents[:3]
        write(cpu / "cpu.cfs_period_us", str(PERIOD_US))
        write(cpu / "cpu.cfs_quota_us", str(int(CLUSTER_CPU * PERIOD_US)))
        write(memory / "memory.limit_in_bytes", str(CLUSTER_MEMORY))
        write(pids / "pids.max", str(CLUSTER_PIDS))
        self.version = 1

    def _make_v2(self, tag: str) -> None:
        parent = ROOT / own_path("").lstrip("/") / tag
        parent.mkdir()
        self.parents.append(parent)
        write(parent / "cgroup.subtree_control", "+cpu +memory +pids")
        write(parent / "cpu.max", f"{int(CLUSTER_CPU * PERIOD_US)} {PERIOD_US}")
        write(parent / "memory.max", str(CLUSTER_MEMORY))
        write(parent / "pids.max", str(CLUSTER_PIDS))
        self.version = 2

    @property
    def ok(self) -> bool:
        return bool(self.version)

    def pod(self, name: str, cpu: float = POD_CPU, memory: int = POD_MEMORY, pids: int = POD_PIDS) -> list[str]:
        """Make the pod's groups; returns the folders a box joins (empty without cgroups)."""
        if not self.ok:
            return []
        folders = [parent / name for parent in self.parents]
        for folder in folders:
            folder.mkdir(exist_ok=True)
        if self.version == 1:
            cpu_dir, memory_dir, pids_dir = folders[:3]
            write(cpu_dir / "cpu.cfs_period_us", str(PERIOD_US))
            write(cpu_dir / "cpu.cfs_quota_us", str(max(1000, int(cpu * PERIOD_US))))
            write(memory_dir / "memory.limit_in_bytes", str(memory))
            write(pids_dir / "pids.max", str(pids))
        else:
            folder = folders[0]
            write(folder / "cpu.max", f"{max(1000, int(cpu * PERIOD_US))} {PERIOD_US}")
            write(folder / "memory.max", str(memory))
            write(folder / "pids.max", str(pids))
            write(folder / "cgroup.subtree_control", "+cpu +memory +pids")  # its containers' groups (container())
        return [str(folder) for folder in folders]

    def container(self, pod_folders: list[str], name: str) -> list[str]:
        """The folders a container's processes join: the pod's, with a group of the container's own where its usage
        is counted (v2: below the pod's, whose limits bound it; v1: below the pod's cpuacct group)."""
        if not pod_folders:
            return []
        child = "c-" + name
        if self.version == 2:
            (Path(pod_folders[0]) / child).mkdir(exist_ok=True)
            return [str(Path(pod_folders[0]) / child)]
        if len(pod_folders) > 3:  # cpuacct, a hierarchy of its own
            (Path(pod_folders[3]) / child).mkdir(exist_ok=True)
            return [*pod_folders[:3], str(Path(pod_folders[3]) / child)]
        return list(pod_folders)

    def usage(self, folders: list[str]) -> tuple[float, int] | None:
        """(CPU seconds used so far, bytes of memory in use) of a pod's groups; None where they cannot be read."""
        try:
            if self.version == 2:
                folder = Path(folders[0])
                stat = dict(line.split() for line in (folder / "cpu.stat").read_text().splitlines() if line)
                return int(stat["usage_usec"]) / 1e6, int((folder / "memory.current").read_text())
            if self.version == 1:
                cpu = next((Path(f) / "cpuacct.usage" for f in folders if (Path(f) / "cpuacct.usage").exists()), None)
                if cpu is None:
                    return None
                return int(cpu.read_text()) / 1e9, int((Path(folders[1]) / "memory.usage_in_bytes").read_text())
        except (OSError, ValueError, KeyError, IndexError):
            return None
        return None

    def kill(self, folders: list[str]) -> None:
        """SIGKILL every process in the groups and the groups below them."""
        kill_members(group for folder in folders for group in tree(Path(folder)))

    def remove_pod(self, folders: list[str]) -> None:
        self.kill(folders)
        for folder in folders:
            for group in tree(Path(folder)):
                remove_group(group)

    def remove(self) -> None:
        """Kill what is left in every pod's group and remove them all."""
        for parent in self.parents:
            if not parent.is_dir():
                continue
            self.kill([str(parent)])
            for group in tree(parent):
                remove_group(group)


def pod_bounds(pod: dict) -> dict:
    """The pod's cgroup bounds: its containers' limits where they set them, never above the defaults."""
    from ..kube.quantity import parse

    cpu = memory = 0.0
    for container in (pod.get("spec") or {}).get("containers") or ():
        limits = (container.get("resources") or {}).get("limits") or {}
        cpu += parse(limits.get("cpu")) or POD_CPU
        memory += parse(limits.get("memory")) or POD_MEMORY
    return {"cpu": min(cpu or POD_CPU, POD_CPU), "memory": int(min(memory or POD_MEMORY, POD_MEMORY))}
