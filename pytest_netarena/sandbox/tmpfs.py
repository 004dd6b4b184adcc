"""Size-capped tmpfs mounts named after their owner process, and the removal of those whose owner died."""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
from pathlib import Path

MNT_DETACH = 2
MS_NOSUID, MS_NODEV = 2, 4


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    return libc


def mount(path: str | Path, options: str, flags: int = 0) -> int:
    """Mount a tmpfs with these options on path: 0, else the errno."""
    if _libc().mount(b"tmpfs", str(path).encode(), b"tmpfs", flags, options.encode()) == 0:
        return 0
    return ctypes.get_errno()


def unmount(path: str | Path) -> None:
    """Detach the mount at path (lazily: a process still inside keeps its view until it leaves)."""
    _libc().umount2(str(path).encode(), MNT_DETACH)


def remove_dead_owners(prefix: str) -> None:
    """Unmount and delete every mounted folder named <prefix><pid>-... whose process is gone (it died without
    cleaning up). Only folders of that exact name: a pod's tmpfs inside a cluster's folder is no owner's."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return
    for line in mounts:
        parts = line.split()
        if len(parts) < 2 or not Path(parts[1]).name.startswith(prefix):
            continue
        try:
            owner = int(Path(parts[1]).name[len(prefix):].split("-", 1)[0])
        except ValueError:
            continue
        if owner != os.getpid() and not Path(f"/proc/{owner}").exists():
            unmount(parts[1])
            shutil.rmtree(parts[1], ignore_errors=True)
