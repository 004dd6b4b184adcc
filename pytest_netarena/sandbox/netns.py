"""Network namespaces held by file descriptor, and running a call from a thread inside one.

A thread that enters a namespace with setns() takes it along when it forks: a process started from
that thread (or a socket created there) lives in the namespace, while the rest of the harness stays
where it is. Nothing here needs `ip netns` or a mount under /run/netns.
"""

from __future__ import annotations

import ctypes
import os
import socket
import struct
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
T = TypeVar("T")


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setns.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.unshare.argtypes = (ctypes.c_int,)
    return libc


def in_fresh_thread(function: Callable[[], T]) -> T:
    """Run function in a fresh thread (whose namespaces it may change) and return its result, or raise what it
    raised."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = function()
        except BaseException as error:  # noqa: BLE001  # re-raised in the caller's thread
            box["error"] = error

    thread = threading.Thread(target=target, name="netarena-netns")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def _thread_ns_path() -> str:
    return f"/proc/self/task/{threading.get_native_id()}/ns/net"


def _bring_up_loopback() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", _ioctl(sock, SIOCGIFFLAGS, request))[1]
        _ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _ioctl(sock: socket.socket, request: int, data: bytes) -> bytes:
    import fcntl

    return fcntl.ioctl(sock.fileno(), request, data)


class NetNamespace:
    """A network namespace kept alive by an open file descriptor."""

    def __init__(self, fd: int, owned: bool) -> None:
        self.fd = fd
        self.owned = owned  #: made by us (an empty one), not another process's

    @classmethod
    def create(cls) -> NetNamespace:
        """A new namespace holding only a loopback interface, which is up. Needs CAP_SYS_ADMIN."""
        return cls.create_with(lambda: None)[0]

    @classmethod
    def create_with(cls, function: Callable[[], T]) -> tuple[NetNamespace, T]:
        """create(), and function() run inside the new namespace by the thread that made it (one thread for
        both: sockets and /proc/sys/net writes there cost no thread of their own)."""

        def make() -> tuple[int, T]:
            libc = _libc()
            if libc.unshare(CLONE_NEWNET) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"cannot create a network namespace: {os.strerror(error)}")
            _bring_up_loopback()
            fd = os.open(_thread_ns_path(), os.O_RDONLY | os.O_CLOEXEC)
            try:
                return fd, function()
            except BaseException:
                os.close(fd)
                raise

        fd, value = in_fresh_thread(make)
        return cls(fd, owned=True), value

    @classmethod
    def of_process(cls, pid: int) -> NetNamespace:
        """The namespace process pid is in (e.g. a Mininet node's shell)."""
        return cls(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC), owned=False)

    def call(self, function: Callable[[], T]) -> T:
        """function(), run in a thread inside this namespace (processes it starts live there)."""
        def inside() -> T:
            self.enter_current_thread()
            return function()

        return in_fresh_thread(inside)

    def run_in(self, launch: Callable[[list[str], list[int]], T], argv: Sequence[str], fds: Sequence[int] = ()) -> T:
        """launch(argv, fds) from a thread inside this namespace (the process it starts, and waits for, lives there)."""
        return self.call(lambda: launch(list(argv), list(fds)))

    def enter_current_thread(self) -> None:
        """Move the calling thread into this namespace (only for a thread made for that purpose)."""
        if self.fd < 0:
            raise OSError("the network namespace was closed")
        here, there = os.stat(_thread_ns_path()), os.fstat(self.fd)
        if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino):
            return  # already there (the harness's own namespace): no privilege needed
        if _libc().setns(self.fd, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"cannot enter the network namespace: {os.strerror(error)}")

    def socket(self, family: int, kind: int, proto: int = 0) -> socket.socket:
        """A socket created inside this namespace (it stays there for its whole life)."""
        return self.call(lambda: socket.socket(family, kind, proto))

    @property
    def inode(self) -> int:
        return os.fstat(self.fd).st_ino

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> NetNamespace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
