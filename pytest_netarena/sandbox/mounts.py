"""Volumes bound into a box: each source opened without following a link it does not trust, on a mount point only root can swap.

A pod's volumes (an emptyDir, a claim's folder) are written by the pod, and its containers' root folders
too, so two paths a launch uses are in the untrusted code's hands: a `subPath` inside a writable volume,
and the mount point inside the root folder. A symbolic link planted on either would make the launcher
(root) bind a host file into the box, or create a mount point somewhere on the host. So a source is opened
component by component with O_NOFOLLOW (links are refused, or, in a folder only the harness writes,
followed only where they stay inside it), and bound by its file descriptor (bubblewrap's `--bind-fd`),
never by a path resolved again later; a mount point is made by root, and every folder on its way must
be root's and no link, so the box's own processes can neither rename nor replace it between the check
and the mount.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

#: what a missing mount point, a folder on its way (sticky: the box may add to it, as to a container's /var/run,
#: but never rename what root made there) and a subPath folder are made with
MOUNT_POINT_MODE = 0o755
WAY_MODE = 0o1777
SUB_PATH_MODE = 0o777
#: volumes one box may have bound (each costs a descriptor and a mount at every launch)
MAX_MOUNTS = 64


class UnsafeMount(OSError):
    """A mount whose source or mount point a link or another user's folder could redirect."""


@dataclass(frozen=True)
class Mount:
    """One volume (or a part of it) bound at `target` in the box."""

    source: str  #: a folder or file the harness made; its own path is trusted
    target: str  #: absolute path in the box
    writable: bool = False
    sub_path: str = ""  #: a relative path inside source (made as a folder when missing and writable)
    #: the harness alone writes inside source: links in sub_path are followed while they stay inside it
    #: (a configMap volume's keys are links into its `..data` folder); else every link is refused
    trusted: bool = False


def _parts(path: str) -> list[str]:
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise UnsafeMount(f"{path!r} must not contain '..'")
    return parts


def open_source(mount: Mount) -> int:
    """An O_PATH descriptor of the mount's source (its sub_path inside it), the caller closes it."""
    flags = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
    if mount.trusted and mount.sub_path:
        base = os.path.realpath(mount.source)
        wanted = os.path.realpath(os.path.join(base, *_parts(mount.sub_path)))
        if os.path.commonpath([base, wanted]) != base:
            raise UnsafeMount(f"subPath {mount.sub_path!r} leaves its volume")
        return os.open(wanted, flags)
    fd = os.open(mount.source, flags | os.O_DIRECTORY if mount.sub_path else flags)
    try:
        for index, part in enumerate(parts := _parts(mount.sub_path)):
            try:
                child = os.open(part, flags, dir_fd=fd)
            except FileNotFoundError:
                if not mount.writable or mount.trusted:
                    raise
                os.mkdir(part, SUB_PATH_MODE, dir_fd=fd)
                made = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                try:
                    os.fchmod(made, SUB_PATH_MODE)  # past the umask: the pod's user writes in it
                finally:
                    os.close(made)
                child = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = child
            mode = os.fstat(fd).st_mode
            if stat.S_ISLNK(mode):
                raise UnsafeMount(f"subPath {mount.sub_path!r}: {part!r} is a symbolic link")
            if index < len(parts) - 1 and not stat.S_ISDIR(mode):
                raise UnsafeMount(f"subPath {mount.sub_path!r}: {part!r} is not a folder")
    except BaseException:
        os.close(fd)
        raise
    return fd


def prepare_target(root: str, target: str, directory: bool) -> None:
    """Make target (a folder, or an empty file) under the root folder, root's own; refuse a way through a link
    or a folder that is not root's (the box's user could swap what follows it)."""
    parts = _parts(target)
    if not parts:
        raise UnsafeMount("a volume cannot be mounted on /")
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            try:
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if last and not directory:
                    os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                     0o644, dir_fd=fd))
                    return
                os.mkdir(part, MOUNT_POINT_MODE, dir_fd=fd)
                if not last:
                    made = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                    try:
                        os.fchmod(made, WAY_MODE)
                    finally:
                        os.close(made)
                info = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                raise UnsafeMount(f"mount point {target}: {part!r} is a symbolic link")
            if info.st_uid != 0:
                raise UnsafeMount(f"mount point {target}: {part!r} is not root's")
            if last:
                if stat.S_ISDIR(info.st_mode) != directory:
                    raise UnsafeMount(f"mount point {target} is a {'file' if directory else 'folder'}, "
                                      f"its volume a {'folder' if directory else 'file'}")
                return
            if not stat.S_ISDIR(info.st_mode):
                raise UnsafeMount(f"mount point {target}: {part!r} is not a folder")
            child = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def arguments(mounts, root: str | None, fds: list[int]) -> list[str]:
    """bubblewrap's arguments binding each mount by descriptor (appended to fds, which the caller closes)."""
    if len(mounts) > MAX_MOUNTS:
        raise UnsafeMount(f"{len(mounts)} volume mounts: a box takes at most {MAX_MOUNTS}")
    box: list[str] = []
    for mount in mounts:
        fd = open_source(mount)
        fds.append(fd)
        if root is not None:
            prepare_target(root, mount.target, stat.S_ISDIR(os.fstat(fd).st_mode))
        box += ["--bind-fd" if mount.writable else "--ro-bind-fd", str(fd), mount.target]
    return box
