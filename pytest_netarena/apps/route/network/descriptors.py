"""Descriptors kept from 1,024 up, out of the range select() takes, since the pingmesh holds thousands at once.

Code elsewhere in the process (another episode's box, a cluster's pods) waits with select(). A descriptor moved up (F_DUPFD) leaves its low number free at once, so the low range stays for everyone else.
Where the process's limits leave no room above HIGH_FD, descriptors stay where they are.
"""

from __future__ import annotations

import fcntl
import os
import resource
import socket

HIGH_FD = 1024


def reserve(count: int) -> int:
    """Make room for `count` more descriptors above HIGH_FD (the soft limit raised towards the hard one, never
    lowered); returns how many fit there now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    in_use = len(os.listdir("/proc/self/fd"))
    wanted = max(HIGH_FD, in_use) + count + 64
    if wanted > soft and soft != resource.RLIM_INFINITY:
        raised = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        if raised > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    return max(0, soft - max(HIGH_FD, in_use) - 64)


def kept_high(fd: int) -> int:
    """fd moved to a number from HIGH_FD up (its old number closed); fd itself when there is no room."""
    try:
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, HIGH_FD)
    except OSError:
        return fd
    os.close(fd)
    return moved


def high_socket(sock: socket.socket) -> socket.socket:
    """The same socket on a descriptor from HIGH_FD up (sock itself when there is no room)."""
    try:
        fd = fcntl.fcntl(sock.fileno(), fcntl.F_DUPFD_CLOEXEC, HIGH_FD)
    except OSError:
        return sock
    moved = socket.socket(sock.family, sock.type, sock.proto, fileno=fd)
    sock.close()
    return moved
