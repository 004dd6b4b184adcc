"""Whether sealed boxes can be made on this machine, how (as root or in a user namespace), and how to fix it."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

from . import seccomp

FIX = ("install bubblewrap (`apt-get install bubblewrap`, which scripts/bootstrap does), "
       "or pass --unsandboxed to run agent actions without boxes (every report is then marked unsandboxed)")


@dataclass(frozen=True)
class Support:
    """What this machine allows: `mode` is "root" (boxes with a private uid and chosen capabilities),
    "userns" (unprivileged boxes in a user namespace) or "" (no boxes: `reason` says why)."""

    bwrap: str
    mode: str
    reason: str = ""

    @property
    def ok(self) -> bool:
        return bool(self.mode)

    @property
    def root(self) -> bool:
        return self.mode == "root"

    def require(self, what: str, root: bool = False) -> None:
        """Raise SandboxUnavailable unless boxes (root boxes when `root`) can be made for `what`."""
        if not self.ok:
            raise SandboxUnavailable(f"{what} needs sealed boxes, which cannot be made here: {self.reason}; fix: {FIX}")
        if root and not self.root:
            raise SandboxUnavailable(
                f"{what} needs root (its boxes join network namespaces made as root, with capabilities); "
                f"run as root (the k8s and MALT suites run sealed without it)")


class SandboxUnavailable(RuntimeError):
    """Boxes cannot be made here; the message says why and how to fix it."""


_TRIAL = ("--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent",
          "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
          "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")


@functools.lru_cache(maxsize=1)
def support() -> Support:
    """Probe once per process: is bubblewrap there, and does a trial box start?"""
    bwrap = os.environ.get("NETARENA_BWRAP") or shutil.which("bwrap") or ""
    if not bwrap:
        return Support("", "", "bubblewrap (bwrap) is not installed")
    root = os.geteuid() == 0
    if root:
        for tool in ("setpriv", "prlimit"):
            if shutil.which(tool) is None:
                return Support(bwrap, "", f"{tool} (util-linux) is not installed")
    argv = [bwrap, *_TRIAL]
    passed: tuple[int, ...] = ()
    if seccomp.supported():  # every box loads the kernel filter: a kernel that cannot is found here, not per action
        passed = (os.memfd_create("filter", 0),)
        os.write(passed[0], seccomp.box_program())
        os.lseek(passed[0], 0, os.SEEK_SET)
        argv += ["--seccomp", str(passed[0])]
    if root:
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP",
                 "--", "setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--", "true"]
    else:
        argv += ["--unshare-user", "--", "true"]
    try:
        trial = subprocess.run(argv, capture_output=True, timeout=20, check=False, pass_fds=passed)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Support(bwrap, "", f"bubblewrap could not start a trial box: {error}")
    finally:
        for fd in passed:
            os.close(fd)
    if trial.returncode != 0:
        detail = trial.stderr.decode(errors="replace").strip().splitlines()
        why = detail[-1] if detail else f"exit status {trial.returncode}"
        hint = "" if root else " (unprivileged user namespaces may be disabled: sysctl kernel.unprivileged_userns_clone=1)"
        return Support(bwrap, "", f"bubblewrap could not start a trial box: {why}{hint}")
    return Support(bwrap, "root" if root else "userns")
