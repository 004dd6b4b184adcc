"""Network namespaces made without root: owned by a user namespace of their own (bubblewrap makes both), joined with nsenter.

An unprivileged harness cannot setns() into a network namespace (that needs CAP_SYS_ADMIN over it and
in its own user namespace), and unshare(CLONE_NEWUSER) is refused to a process with threads. So a
one-shot helper made by bubblewrap opens its new user and network namespaces and hands their file
descriptors back; the harness holds them (they keep both namespaces alive). A command then runs in
the namespace through `nsenter`, which joins the user namespace (the harness's uid owns it, so it
may) and then the network namespace, and execs the command, whose capabilities end at that exec. A
socket that must live in the namespace (a server's listener) is made the same way and handed back.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import TypeVar

from .netns import NetNamespace
from .support import support
from .views import HOST_PATH

T = TypeVar("T")

#: run with the harness's own Python (-I -S: only the standard library's _socket and posix); argv:
#: "ns" FD (send the user and network namespaces) or "socket" FD FAMILY KIND (send a new socket)
HELPER = r"""
import _socket, posix, sys
link = _socket.socket(fileno=int(sys.argv[2]))
if sys.argv[1] == "ns":
    fds = [posix.open("/proc/self/ns/user", posix.O_RDONLY), posix.open("/proc/self/ns/net", posix.O_RDONLY)]
else:
    fds = [_socket.socket(int(sys.argv[3]), int(sys.argv[4])).detach()]
link.sendmsg([b"ok"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))])
"""


def _handed(argv: Callable[[int], list[str]], count: int, what: str) -> list[int]:
    """Run argv(fd) (a helper that hands file descriptors back on fd) and return the `count` it sent."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            done = subprocess.run(argv(theirs.fileno()), pass_fds=(theirs.fileno(),), capture_output=True,
                                  timeout=30, env={"PATH": HOST_PATH}, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise OSError(f"cannot {what}: {error}") from error
        theirs.close()
        ours.settimeout(5)
        try:
            message, fds, _, _ = socket.recv_fds(ours, 16, count)
        except OSError:
            message, fds = b"", []
        if message != b"ok" or len(fds) != count:
            for fd in fds:
                os.close(fd)
            detail = done.stderr.decode(errors="replace").strip().splitlines()
            raise OSError(f"cannot {what}: {detail[-1] if detail else f'exit status {done.returncode}'}")
        return fds
    finally:
        ours.close()
        theirs.close()


class UserNetNamespace:
    """A network namespace owned by a user namespace the harness's uid made; commands join it through nsenter."""

    def __init__(self, user_fd: int, net_fd: int, nsenter: str) -> None:
        self.user_fd, self.fd = user_fd, net_fd
        self.nsenter = nsenter
        self.owned = True

    @classmethod
    def create(cls) -> UserNetNamespace:
        """A new namespace holding only a loopback interface, which is up (bubblewrap brings it up)."""
        found = support()
        nsenter = shutil.which("nsenter", path=HOST_PATH)
        if not found.ok or nsenter is None:
            raise OSError(found.reason or "nsenter (util-linux) is not installed")
        argv = [found.bwrap, "--unshare-user", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/",
                "--proc", "/proc", "--", sys.executable, "-I", "-S", "-c", HELPER, "ns"]
        user_fd, net_fd = _handed(lambda fd: [*argv, str(fd)], 2, "make a network namespace in a user namespace")
        return cls(user_fd, net_fd, nsenter)

    def _enter(self) -> list[str]:
        if self.fd < 0:
            raise OSError("the network namespace was closed")
        # the harness's own descriptors, named through /proc: nothing is passed to the command that runs
        pid = os.getpid()
        return [self.nsenter, f"--user=/proc/{pid}/fd/{self.user_fd}", f"--net=/proc/{pid}/fd/{self.fd}",
                "--preserve-credentials", "--"]

    def run_in(self, launch: Callable[[list[str], list[int]], T], argv: Sequence[str], fds: Sequence[int] = ()) -> T:
        """launch(argv, fds) with argv made to run inside this namespace."""
        return launch([*self._enter(), *argv], list(fds))

    def socket(self, family: int, kind: int, proto: int = 0) -> socket.socket:
        """A socket created inside this namespace (it stays there for its whole life)."""
        argv = [*self._enter(), sys.executable, "-I", "-S", "-c", HELPER, "socket"]
        (fd,) = _handed(lambda link: [*argv, str(link), str(int(family)), str(int(kind))], 1,
                        "make a socket in the network namespace")
        return socket.socket(fileno=fd)

    @property
    def inode(self) -> int:
        return os.fstat(self.fd).st_ino

    def close(self) -> None:
        for name in ("fd", "user_fd"):
            fd = getattr(self, name)
            if fd >= 0:
                os.close(fd)
                setattr(self, name, -1)

    def __enter__(self) -> UserNetNamespace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def new_network_namespace() -> NetNamespace | UserNetNamespace:
    """A fresh network namespace holding only a loopback that is up: made directly as root, in a user namespace otherwise."""
    if os.geteuid() == 0:
        return NetNamespace.create()
    return UserNetNamespace.create()
