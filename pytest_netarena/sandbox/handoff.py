"""One-shot helpers that make something in namespaces of their own and hand its file descriptors back over a socket.

The helper is this harness's own Python (-I -S: only the standard library), started by the caller's
argv (a bubblewrap or nsenter line that puts it where it must run); it sends its descriptors over the
socket pair's end it is given and exits. Its modes (the first argument after the script):

  ns FD                  the user and network namespaces it runs in
  socket FD FAMILY KIND  a new socket, made where it runs
  store FD FOLDER BYTES  a user and mount namespace of its own, where a size-capped tmpfs is mounted on FOLDER
                         (mounts made private first): the user and mount namespaces, and FOLDER opened there
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable

from .views import HOST_PATH

HELPER = r"""
import _socket, posix, sys
link = _socket.socket(fileno=int(sys.argv[2]))
if sys.argv[1] == "ns":
    fds = [posix.open("/proc/self/ns/user", posix.O_RDONLY), posix.open("/proc/self/ns/net", posix.O_RDONLY)]
elif sys.argv[1] == "socket":
    fds = [_socket.socket(int(sys.argv[3]), int(sys.argv[4])).detach()]
else:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = posix.getuid(), posix.getgid()
    if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
        raise OSError(ctypes.get_errno(), "unshare")
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as mapping:
            mapping.write(text)
    if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) != 0:  # MS_REC | MS_PRIVATE
        raise OSError(ctypes.get_errno(), "mount --make-rprivate /")
    options = f"size={sys.argv[4]},mode=0755".encode()
    if libc.mount(b"tmpfs", sys.argv[3].encode(), b"tmpfs", 0, options) != 0:
        raise OSError(ctypes.get_errno(), "mount tmpfs")
    fds = [posix.open("/proc/self/ns/user", posix.O_RDONLY), posix.open("/proc/self/ns/mnt", posix.O_RDONLY),
           posix.open(sys.argv[3], posix.O_RDONLY | posix.O_DIRECTORY)]
link.sendmsg([b"ok"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))])
"""


def helper_argv(mode: str, fd: int, *args: str) -> list[str]:
    """The helper's argv: its mode, the descriptor of its end of the socket pair (see handed()), the mode's arguments."""
    return [sys.executable, "-I", "-S", "-c", HELPER, mode, str(fd), *args]


def handed(argv: Callable[[int], list[str]], count: int, what: str) -> list[int]:
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
        for fd in fds:
            os.set_inheritable(fd, False)
        return fds
    finally:
        ours.close()
        theirs.close()
