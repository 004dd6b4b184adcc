"""The boxes of a Harbor task's agent and verifier: Harbor's mount points, a network where only the task's API server listens.

Each phase gets a fresh sealed box (`sandbox.BoxSpec`) and a fresh network namespace holding only a loopback, on
which the task's API server takes one more https listener at the address the task's kubeconfigs name. The box sees
the shared libraries, kubectl and text tools, the task's environment scripts, and the folders the phase is given at
Harbor's own paths (/app, /kube, /tests, /logs): nothing of the harness, no admin credential, no other phase's
files. When the phase's command ends, its box is gone with everything it started, and the listener is closed with
every connection it served (a watch, a log stream, an exec session in a pod), before the caller goes on.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass

from .. import sandbox
from ..core.process import Finished
from ..sandbox import tmpfs, views
from .kubectl import ONE_SHOT_GO

#: what a phase's box may run: bash, text tools, kubectl (and curl where installed), and the rest of coreutils a
#: task image's shell scripts reach for (checksums of a baseline, numbers, files in /tmp)
PROGRAMS = (*views.SHELL_TOOLS, "curl", "base64", "openssl", "sha256sum", "sha1sum", "sha512sum", "md5sum", "cksum",
            "base32", "numfmt", "shuf", "split", "truncate", "dd", "printenv", "nproc", "sum", "tsort", "expand",
            "unexpand", "du", "df", "getent", "gzip", "tar", "flock", "sync")
#: the task's environment/scripts are on PATH (Harbor's images put them in /usr/local/bin)
SCRIPTS = "/usr/local"
#: kubectl's API discovery cache, as the bootstrap's kubectl left it, read-only (it names the server's resource
#: types, nothing else): without it each box's first kubectl would download discovery again
CACHE = "/usr/share/kubectl-cache"
PATH = "/usr/local/bin:/usr/bin:/bin"
#: what a phase may print before it is stopped (its log)
OUTPUT_BYTES = 1 << 20
#: the agent's workspace /app (as root a tmpfs of this size: what it writes never fills the host's disk)
WORKSPACE_BYTES, WORKSPACE_FILES = 256 << 20, 65536


@dataclass(frozen=True)
class Phase:
    """One boxed phase: its command, what it sees, for how long."""

    argv: tuple[str, ...]
    env: Mapping[str, str]
    wall_s: float
    binds: tuple[tuple[str, str], ...] = ()  #: read-only (host folder, box path)
    writable: tuple[tuple[str, str], ...] = ()  #: writable (host folder, box path): the phase's own uid owns them
    hostname: str = "main"


@dataclass(frozen=True)
class PhaseEnded:
    finished: Finished
    drained: bool  #: every connection the phase opened to the API server had ended when it returned


def available() -> str | None:
    """Why phases cannot be boxed here, or None."""
    found = sandbox.support()
    return None if found.ok else (f"a task's agent and verifier run in sealed boxes, which cannot be made here: "
                                  f"{found.reason}; install bubblewrap (apt-get install bubblewrap)")


def run(server, port: int, phase: Phase, kubectl: str, scripts: str, cache: str | None = None) -> PhaseEnded:
    """Run the phase in a fresh box on a fresh network namespace where `server` answers https on 127.0.0.1:port.

    scripts: a host folder holding bin/ (the task's environment scripts), read-only at /usr/local; cache: a
    kubectl discovery cache the harness's own kubectl filled, read-only."""
    where = sandbox.support()
    uid = sandbox.private_uid() if where.root else os.getuid()
    for folder, _ in phase.writable:
        _own(folder, uid)
    network = sandbox.new_network_namespace()
    try:
        sock = network.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        url = server.listen(sock=sock, tls=True)
        try:
            binds, env = ((scripts, SCRIPTS), *phase.binds), {**ONE_SHOT_GO, **phase.env, "PATH": PATH}
            if cache is not None:
                binds, env = (*binds, (cache, CACHE)), {**env, "KUBECACHEDIR": CACHE}
            spec = sandbox.BoxSpec(
                programs={**views.programs(PROGRAMS), "kubectl": os.path.realpath(kubectl)},
                binds=binds, writable=phase.writable, network=network, env=env, hostname=phase.hostname, uid=uid,
                limits=sandbox.Limits(wall_s=phase.wall_s, cpu_s=int(phase.wall_s) + 1, processes=128,
                                      file_bytes=64 << 20, open_files=1024, output_bytes=OUTPUT_BYTES,
                                      tmp_bytes=64 << 20))
            finished = sandbox.run(spec, phase.argv)
        finally:
            drained = server.close_listener(url)
    finally:
        network.close()
    return PhaseEnded(finished, drained)


def mount_workspace(folder: str) -> bool:
    """As root, make folder a size-capped tmpfs (the agent's /app); False where it cannot be (without root: a
    folder of the work folder, bounded only by each file's size limit)."""
    if os.geteuid() != 0:
        return False
    return tmpfs.mount(folder, f"size={WORKSPACE_BYTES},nr_inodes={WORKSPACE_FILES},mode=0755",
                       tmpfs.MS_NOSUID | tmpfs.MS_NODEV) == 0


def unmount_workspace(folder: str) -> None:
    tmpfs.unmount(folder)


def _own(folder: str, uid: int) -> None:
    """Give a folder (and what it holds) to the phase's uid, so its box may write there and nothing else."""
    for root, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            os.lchown(os.path.join(root, name), uid, uid)
    os.chown(folder, uid, uid)
    os.chmod(folder, 0o755)


def readable(folder: str) -> None:
    """Make a folder the harness wrote readable (and its scripts runnable) by a box's private uid."""
    for root, dirs, files in os.walk(folder):
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o755)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444 | (0o111 if os.stat(path).st_mode & 0o100 else 0))
    os.chmod(folder, 0o755)
