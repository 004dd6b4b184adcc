"""Where the folders boxes bind come from: copies on a tmpfs of this process's own, so a box's mount table names no host path.

A bind mount shows in the box's `/proc/self/mountinfo` as the path of its source inside the source's
file system. Bound straight from the host, that path names where the harness keeps its cache, its
checkout or its Python. So every folder and file a box binds read-only (its programs, its libraries,
Python and its packages, a CLI's install, /etc files) is first copied once into the store, a size-capped
tmpfs of this process's own: a box's mount table then shows only `/<kind>-<content hash>` inside a file
system called `tmpfs`. Entries are named after their content, made once per process and never changed;
a file met twice is linked, not copied again.

As root the tmpfs is mounted on the host for this process; it goes with the process (and the stores of
processes that died without unmounting theirs go with the next one that starts). A plain user cannot
mount on the host: a helper makes a user and mount namespace of the harness's own and mounts the tmpfs
there (handoff.py); the harness writes to it through a descriptor of its folder, and every box starts
through `nsenter` into those namespaces (entering()), where bubblewrap finds the store at its folder. The
namespaces live as long as the harness holds their descriptors. Where neither can be made, the store is a
folder of the user's cache (hard links where it can), and a box's mount table names that folder.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from . import tmpfs
from .handoff import handed, helper_argv
from .views import HOST_PATH, cache_root

#: the most the store of one process may hold (a CLI's install is the largest entry, ~400 MB)
STORE_BYTES = 4 << 30
PREFIX = "netarena-store-"


class BindStore:
    """The folders and files boxes bind, each copied in once. `mode`: "host" (a tmpfs mounted on the host, as root),
    "namespace" (a tmpfs in a user and mount namespace of the harness's own) or "folder" (the fallback; `reason`
    says why)."""

    def __init__(self) -> None:
        self.mode, self.reason = "folder", ""
        self.owner = os.getpid()
        self._namespace: tuple[int, int, int] | None = None  #: (user namespace, mount namespace, store folder) fds
        self._lock = threading.RLock()
        self._placed: dict[tuple[int, int, int, int], str] = {}  #: a host file's identity -> its first copy here
        self._copies: dict[tuple[str, tuple[str, ...]], tuple[str, str]] = {}  #: (source, exclude) -> (signature, copy)
        self.root = str(cache_root() / "store")
        if os.geteuid() == 0:
            remove_leftovers()
            path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
            os.chmod(path, 0o755)
            error = tmpfs.mount(path, f"size={STORE_BYTES},mode=0755")
            if error == 0:
                self.root, self.mode = path, "host"
                atexit.register(self.remove)
                return
            self.reason = f"cannot mount the store's tmpfs: {os.strerror(error)}"
            os.rmdir(path)
        Path(self.root).mkdir(parents=True, exist_ok=True, mode=0o755)
        nsenter = shutil.which("nsenter", path=HOST_PATH)
        if os.geteuid() != 0 and nsenter is not None:
            try:
                user, mount, folder = handed(lambda fd: helper_argv("store", fd, self.root, str(STORE_BYTES)), 3,
                                             "make the store's namespace")
            except OSError as error:
                self.reason = str(error)
            else:
                self._namespace, self._nsenter, self.mode = (user, mount, folder), nsenter, "namespace"

    @property
    def memory(self) -> bool:
        """Whether the store is a tmpfs of its own (its paths name nothing of the host)."""
        return self.mode != "folder"

    def local(self, path: str) -> str:
        """Where the harness itself reaches a store path (as boxes see it): the same path, or through the descriptor
        of the store's folder when it is in a namespace of its own."""
        if self._namespace is None or not self.holds(path):
            return path
        return f"/proc/self/fd/{self._namespace[2]}" + path[len(self.root):]

    def entering(self, network: object = None) -> list[str]:
        """The argv prefix that puts a box's launch where it sees the store (and, given a namespace with
        nsenter_options(), where it enters that network namespace too); [] when boxes see it from anywhere."""
        if self._namespace is None:
            return []
        user, mount, _ = self._namespace
        pid = os.getpid()
        joined = network.nsenter_options() if hasattr(network, "nsenter_options") else []
        return [self._nsenter, f"--user=/proc/{pid}/fd/{user}", f"--mount=/proc/{pid}/fd/{mount}", *joined,
                "--preserve-credentials", "--"]

    def holds(self, path: str) -> bool:
        return path == self.root or path.startswith(self.root + os.sep)

    def folder(self, kind: str, key: str, fill: Callable[[Path], None]) -> str:
        """The entry `kind`-`key`, made by fill(staging folder) the first time (named after its content by the caller)."""
        name = f"{kind}-{key}"
        made = os.path.join(self.root, name)
        target = Path(self.local(made))
        if target.exists():
            return made
        with self._lock:
            if target.exists():
                return made
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.local(self.root)))
            try:
                fill(staging)
                staging.chmod(0o755)
                try:
                    staging.rename(target)
                except OSError:  # the fallback's folder is shared: another process made the same entry first
                    if not target.exists():
                        raise
                else:  # the files placed in staging are now in the entry: later links find them there
                    moved = str(staging) + os.sep
                    for identity, path in self._placed.items():
                        if path.startswith(moved):
                            self._placed[identity] = str(target) + path[len(str(staging)):]
            finally:
                if staging.exists():
                    shutil.rmtree(staging, ignore_errors=True)
        return made

    def place(self, source: str, target: Path) -> None:
        """Put the host file `source` (a link is followed) at `target` inside the store (a path the harness reaches:
        in a staging folder fill() was given): linked to an earlier copy of the same file, else copied."""
        info = os.stat(source)
        identity = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
        with self._lock:
            earlier = self._placed.get(identity)
            if earlier is not None and os.path.exists(earlier):
                os.link(earlier, target)
                return
            try:
                if self.memory:
                    raise OSError("a copy, not a link to the host's file")
                os.link(source, target)  # the fallback is on a disk: share the host's file where it can
            except OSError:
                shutil.copyfile(source, target)
                os.chmod(target, 0o755 if info.st_mode & 0o111 else 0o644)
            self._placed[identity] = str(target)

    def files(self, table: dict[str, str]) -> str:
        """A folder holding exactly these host files under these names ({name: host file}; a multi-call program
        such as busybox under many names is one file, linked)."""
        entries = []
        for name, path in sorted(table.items()):
            info = os.stat(path)
            entries.append(f"{name}\0{path}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}")
        key = hashlib.sha256("\n".join(entries).encode()).hexdigest()[:24]

        def fill(staging: Path) -> None:
            for name, path in table.items():
                self.place(path, staging / name)

        return self.folder("files", key, fill)

    def copy(self, source: str, exclude: Iterable[str] = ()) -> str:
        """A copy of the host file or folder `source` (a folder without the entries named in `exclude`, at any depth)."""
        if self.holds(source):
            return source
        skip = tuple(sorted(exclude))
        signature, entries = _signature(source, skip)
        known = self._copies.get((source, skip))
        if known is not None and known[0] == signature:
            return known[1]

        def fill(staging: Path) -> None:
            if entries is None:  # a file: the entry is a folder holding it, under its own name
                self.place(source, staging / os.path.basename(source))
                return
            for relative, kind in entries:
                target = staging / relative
                if kind == "dir":
                    target.mkdir()
                    target.chmod(0o755)
                elif kind == "link":
                    os.symlink(os.readlink(os.path.join(source, relative)), target)
                else:
                    self.place(os.path.join(source, relative), target)

        made = self.folder("copy", signature, fill)
        copy = os.path.join(made, os.path.basename(source)) if entries is None else made
        self._copies[(source, skip)] = (signature, copy)
        return copy

    def remove(self) -> None:
        """Unmount the host's tmpfs (only the process that made it: a forked child shares it)."""
        if self.mode == "host" and os.getpid() == self.owner:
            tmpfs.unmount(self.root)
            self.mode = "folder"
            shutil.rmtree(self.root, ignore_errors=True)


def _signature(source: str, exclude: tuple[str, ...]) -> tuple[str, list[tuple[str, str]] | None]:
    """(content key, entries) of a host file or folder: entries are (relative path, "dir"/"link"/"file"), parents
    first; None for a file. The key covers every entry's name, size and time, so a changed file gets a new copy."""
    digest = hashlib.sha256(source.encode() + b"\0" + "\0".join(exclude).encode())
    info = os.stat(source)
    if not stat.S_ISDIR(info.st_mode):
        digest.update(f"{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}".encode())
        return digest.hexdigest()[:24], None
    entries: list[tuple[str, str]] = []

    def walk(folder: str, relative: str) -> None:
        with os.scandir(folder) as listing:
            found = sorted(listing, key=lambda entry: entry.name)
        for entry in found:
            if entry.name in exclude:
                continue
            path = os.path.join(relative, entry.name) if relative else entry.name
            if entry.is_symlink():
                entries.append((path, "link"))
                digest.update(f"{path}\0link\0{os.readlink(entry.path)}\n".encode())
            elif entry.is_dir():
                entries.append((path, "dir"))
                digest.update(f"{path}\0dir\n".encode())
                walk(entry.path, path)
            elif entry.is_file():
                info = entry.stat()
                entries.append((path, "file"))
                digest.update(f"{path}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())

    walk(source, "")
    return digest.hexdigest()[:24], entries


@functools.lru_cache(maxsize=1)
def store() -> BindStore:
    """This process's store (made on first use)."""
    return BindStore()


def remove_leftovers() -> None:
    """Unmount the stores of processes that died without unmounting theirs."""
    tmpfs.remove_dead_owners(PREFIX)
