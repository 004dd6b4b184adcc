"""Network namespaces made without root: owned by a user namespace of their own (bubblewrap makes both), joined with nsenter.

An unprivileged harness cannot setns() into a network namespace (that needs CAP_SYS_ADMIN over it and
in its own user namespace), and unshare(CLONE_NEWUSER) is refused to a process with threads. So a
one-shot helper made by bubblewrap (handoff.py) opens its new user and network namespaces and hands their
file descriptors back; the harness holds them (they keep both namespaces alive). The helper runs inside
the store's user namespace (store.py), so a box that enters that namespace to reach the store may
enter this network namespace too. A command then runs in
the namespace through `nsenter`, which joins the user namespace (the harness's uid owns it, so it
may) and then the network namespace, and execs the command, whose capabilities end at that exec. A
socket that must live in the namespace (a server's listener) is made the same way and handed back.
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Callable, Sequence
from typing import TypeVar

from .handoff import handed, helper_argv
from .netns import NetNamespace
from .store import store
from .support import support
from .views import HOST_PATH

T = TypeVar("T")

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
        # made inside the store's user namespace (when it has one), so that a box entering that namespace to reach
        # the store may enter this one too
        argv = [*store().entering(), found.bwrap, "--unshare-user", "--unshare-net", "--die-with-parent",
                "--ro-bind", "/", "/", "--proc", "/proc", "--"]
        user_fd, net_fd = handed(lambda fd: [*argv, *helper_argv("ns", fd)], 2,
                                 "make a network namespace in a user namespace")
        return cls(user_fd, net_fd, nsenter)

    def _enter(self) -> list[str]:
        return [self.nsenter, f"--user=/proc/{os.getpid()}/fd/{self.user_fd}", *self.nsenter_options(),
                "--preserve-credentials", "--"]

    def nsenter_options(self) -> list[str]:
        """nsenter's option entering this network namespace (once in its user namespace or the store's)."""
        if self.fd < 0:
            raise OSError("the network namespace was closed")
        # the harness's own descriptors, named through /proc: nothing is passed to the command that runs
        return [f"--net=/proc/{os.getpid()}/fd/{self.fd}"]

    def run_in(self, launch: Callable[[list[str], list[int]], T], argv: Sequence[str], fds: Sequence[int] = ()) -> T:
        """launch(argv, fds) with argv made to run inside this namespace."""
        return launch([*self._enter(), *argv], list(fds))

    def socket(self, family: int, kind: int, proto: int = 0) -> socket.socket:
        """A socket created inside this namespace (it stays there for its whole life)."""
        (fd,) = handed(lambda link: [*self._enter(), *helper_argv("socket", link, str(int(family)), str(int(kind)))],
                       1, "make a socket in the network namespace")
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
