"""Whether pods can run on this machine (root, boxes, namespaces, iptables, busybox), and the cluster's scratch space."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import NetNamespace, support as box_support, tmpfs

#: the size of the tmpfs all containers of one cluster write their files to: it holds each pod's own tmpfs
SCRATCH_BYTES = 256 << 20
#: one pod's files (its containers' roots): its containers' ephemeral-storage limits, else POD_DISK_BYTES, never more
#: than MAX_POD_DISK_BYTES; at most POD_DISK_FILES files and folders
POD_DISK_BYTES = 64 << 20
MAX_POD_DISK_BYTES = 256 << 20
POD_DISK_FILES = 16384
SCRATCH_PREFIX = "netarena-pods-"


@dataclass(frozen=True)
class LiveSupport:
    """Can this machine run pods? `reason` says why not (the API server then runs alone: mode "api-only")."""

    ok: bool
    reason: str = ""


class LiveUnavailable(RuntimeError):
    """Pods cannot run here; the message says why."""


@functools.lru_cache(maxsize=1)
def live_support() -> LiveSupport:
    """Probe once per process."""
    if os.geteuid() != 0:
        return LiveSupport(False, "running pods needs root (network namespaces, iptables, boxes with a uid per pod)")
    boxes = box_support()
    if not boxes.root:
        return LiveSupport(False, f"sealed boxes cannot be made as root here: {boxes.reason or boxes.mode}")
    for program in ("busybox", "iptables-restore"):
        if shutil.which(program, path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin") is None:
            package = "busybox" if program == "busybox" else "iptables"
            return LiveSupport(False, f"{program} is not installed (apt-get install {package})")
    try:
        with NetNamespace.create() as trial:
            result = trial.call(lambda: subprocess.run(
                ["iptables-restore"], input=b"*filter\n:FORWARD ACCEPT [0:0]\n-A FORWARD -m conntrack --ctstate "
                                            b"ESTABLISHED -j ACCEPT\nCOMMIT\n", capture_output=True, timeout=60))
    except (OSError, subprocess.SubprocessError) as error:
        return LiveSupport(False, f"cannot make a network namespace with iptables rules: {error}")
    if result.returncode != 0:
        return LiveSupport(False, f"iptables does not work in a network namespace: "
                                  f"{result.stderr.decode(errors='replace').strip()[:300]}")
    return LiveSupport(True)


class Scratch:
    """A size-capped tmpfs the cluster's containers write to (their root folders); gone with the cluster."""

    def __init__(self) -> None:
        remove_leftovers()
        self.path = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
        os.chmod(self.path, 0o755)
        error = tmpfs.mount(self.path, f"size={SCRATCH_BYTES},mode=0755")
        self.mounted = error == 0
        self.reason = "" if self.mounted else f"no tmpfs for the pods' files: {os.strerror(error)}"

    def pod_disk(self, uid: str) -> Path:
        """Where one pod's files are (its tmpfs, once mount_pod made it)."""
        return self.path / uid / "disk"

    def mount_pod(self, uid: str, size: int) -> Path:
        """A tmpfs of its own for one pod's files, at most `size` bytes and POD_DISK_FILES entries (OSError if it
        cannot be made): a pod that fills it has no room left, and every other pod still has its own."""
        folder = self.pod_disk(uid)
        folder.mkdir(mode=0o755, parents=True)
        error = tmpfs.mount(folder, f"size={max(size, 1 << 20)},nr_inodes={POD_DISK_FILES},mode=0755",
                            tmpfs.MS_NOSUID | tmpfs.MS_NODEV)
        if error:
            shutil.rmtree(folder.parent, ignore_errors=True)
            raise OSError(error, f"cannot make the pod's tmpfs: {os.strerror(error)}")
        return folder

    def unmount_pod(self, uid: str) -> None:
        tmpfs.unmount(self.pod_disk(uid))
        shutil.rmtree(self.path / uid, ignore_errors=True)

    def remove(self) -> None:
        if self.mounted:
            tmpfs.unmount(self.path)
            self.mounted = False
        shutil.rmtree(self.path, ignore_errors=True)


def remove_leftovers() -> None:
    """Unmount the scratch spaces of clusters whose process died without cleaning up."""
    tmpfs.remove_dead_owners(SCRATCH_PREFIX)
