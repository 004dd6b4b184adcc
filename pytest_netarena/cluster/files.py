"""A container's files as its stand-in reads them (nginx serving its html folder): its root folder and its volumes.

The harness reads them as root, and the pod writes them, so nothing is read through a link the pod
could plant: a path is opened a component at a time without following links (sandbox/mounts.py), in
the volume mounted deepest on it, else in the root folder; only regular files, of bounded size.
"""

from __future__ import annotations

import os
import stat

from ..sandbox.mounts import Mount, UnsafeMount, open_source

#: the largest file a stand-in serves
MAX_FILE = 1 << 20


class ContainerFiles:
    """Read-only access to one container's file system as it sees it."""

    def __init__(self, root: str | None, mounts: tuple[Mount, ...] = ()) -> None:
        self.root = root
        self.mounts = sorted(mounts, key=lambda m: len(m.target.rstrip("/")), reverse=True)

    def _where(self, path: str) -> Mount | None:
        """The mount (or root folder) holding path, as a Mount whose sub_path is path within it."""
        for mount in self.mounts:
            target = mount.target.rstrip("/")
            if path == target or path.startswith(target + "/"):
                rest = path[len(target):].strip("/")
                sub = "/".join(p for p in (mount.sub_path.strip("/"), rest) if p)
                return Mount(mount.source, mount.target, False, sub, mount.trusted)
        if self.root is None:
            return None
        return Mount(self.root, "/", False, path.strip("/"))

    def kind(self, path: str) -> str:
        """"file", "folder" or "" (missing, unreadable or behind a link)."""
        fd = self._open(path)
        if fd is None:
            return ""
        try:
            mode = os.fstat(fd).st_mode
        finally:
            os.close(fd)
        return "file" if stat.S_ISREG(mode) else "folder" if stat.S_ISDIR(mode) else ""

    def read(self, path: str) -> bytes | None:
        """The regular file at path (None: missing, not a file, larger than MAX_FILE, or behind a link)."""
        fd = self._open(path)
        if fd is None:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode) or os.fstat(fd).st_size > MAX_FILE:
                return None
            readable = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | os.O_CLOEXEC | os.O_NOCTTY)
        except OSError:
            return None
        finally:
            os.close(fd)
        try:
            return os.read(readable, MAX_FILE + 1)[:MAX_FILE]
        finally:
            os.close(readable)

    def _open(self, path: str) -> int | None:
        if not path.startswith("/") or "\0" in path:
            return None
        where = self._where(os.path.normpath(path))
        if where is None:
            return None
        try:
            return open_source(where)
        except (OSError, UnsafeMount):
            return None
