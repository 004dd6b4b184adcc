"""Per-episode name prefixes leased through owner files, and the sweep of dead owners' leftovers.

Every network's names start with a prefix "na" + 4 base-36 characters. Before a network is built
its prefix is claimed by creating /run/netarena/<prefix>.pid exclusively (so concurrent pytest
sessions and xdist workers never share one); the file names the owner process and its start time.
The sweep removes only leftovers of prefixes whose owner is dead (links and bridges carrying the
prefix, Mininet node shells and every process inside their namespaces), never anything else.
"""

from __future__ import annotations

import fcntl
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

LEASE_DIR = Path(os.environ.get("NETARENA_LEASE_DIR", "/run/netarena"))
PREFIX_RE = re.compile(r"^na[0-9a-z]{4}$")
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_SLOTS = 36**2


def _base36(number: int, width: int) -> str:
    text = ""
    for _ in range(width):
        number, digit = divmod(number, 36)
        text = _DIGITS[digit] + text
    return text


def worker_number() -> int:
    """The xdist worker index (gw3 -> 3); outside xdist a pid-derived slot above any worker's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and worker[2:].isdigit():
        return int(worker[2:]) % 1000
    return 1000 + os.getpid() % (_SLOTS - 1000)


def process_start(pid: int) -> str | None:
    """The start time of pid (clock ticks since boot), None when it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@dataclass(frozen=True)
class Lease:
    """A claimed prefix and its owner file."""

    prefix: str
    path: Path

    def release(self) -> None:
        self.path.unlink(missing_ok=True)


def claim(episode: int) -> Lease:
    """Claim a free prefix for this worker's episode number; RuntimeError if none is free.

    The owner file appears with its record already in it (written aside, then hard-linked into place,
    which fails if the name is taken): a sweep never reads a claimed lease as empty, so as dead."""
    LEASE_DIR.mkdir(parents=True, exist_ok=True)
    worker = worker_number()
    me = os.getpid()
    record = f"{me} {process_start(me)} {os.environ.get('PYTEST_XDIST_WORKER', 'main')} {episode}\n"
    draft = LEASE_DIR / f".claim-{me}-{threading.get_ident()}"
    draft.write_text(record)
    try:
        for attempt in range(_SLOTS):
            prefix = "na" + _base36(worker, 2) + _base36(episode + attempt, 2)
            path = LEASE_DIR / f"{prefix}.pid"
            try:
                os.link(draft, path)
            except FileExistsError:
                continue
            return Lease(prefix, path)
    finally:
        draft.unlink(missing_ok=True)
    raise RuntimeError(f"no free network prefix in {LEASE_DIR}")


def owner_alive(path: Path) -> bool:
    """Whether the process recorded in a lease file still runs (same pid and start time)."""
    try:
        return _alive(path.read_text())
    except OSError:
        return False


def _alive(record: str) -> bool:
    try:
        pid_text, start, *_ = record.split()
        pid = int(pid_text)
    except ValueError:
        return False
    return process_start(pid) == start


def _netns_inode(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def leftover_processes(prefix: str) -> list[int]:
    """Node shells named mininet:<prefix>... and every process inside their private namespaces."""
    own_ns = _netns_inode(os.getpid())
    shells, namespaces = [], set()
    for pid in _pids():
        if any(arg.startswith(f"mininet:{prefix}") for arg in _cmdline(pid)):
            shells.append(pid)
            inode = _netns_inode(pid)
            if inode is not None and inode != own_ns:
                namespaces.add(inode)
    members = [pid for pid in _pids() if namespaces and _netns_inode(pid) in namespaces]
    return sorted(set(shells) | set(members) - {os.getpid()})


def leftover_links(prefix: str) -> list[str]:
    """Links (veth ends, bridges) in this namespace whose name carries prefix (one netlink dump, no process)."""
    from ....netlink import Netlink

    sock = Netlink.of_process(os.getpid())
    try:
        return [link.name for link in sock.links() if link.name.startswith(prefix)]
    finally:
        sock.close()


def remove_leftovers(prefix: str) -> list[str]:
    """Kill processes and delete links carrying prefix; what was removed, for logs and tests."""
    removed = []
    for pid in leftover_processes(prefix):
        try:
            os.kill(pid, signal.SIGKILL)
            removed.append(f"process {pid}")
        except ProcessLookupError:
            pass
    for name in leftover_links(prefix):
        result = subprocess.run(["ip", "link", "del", name], capture_output=True, check=False)
        if result.returncode == 0:
            removed.append(f"link {name}")
    return removed


def sweep() -> list[str]:
    """Remove the leftovers of every lease whose owner is dead, then the lease; returns what went."""
    removed: list[str] = []
    if not LEASE_DIR.is_dir():
        return removed
    for draft in LEASE_DIR.glob(".claim-*"):  # a claim's draft left by a process killed mid-claim
        pid = draft.name.split("-")[1]
        if pid.isdigit() and process_start(int(pid)) is None:
            draft.unlink(missing_ok=True)
    for path in sorted(LEASE_DIR.glob("na*.pid")):
        prefix = path.name[: -len(".pid")]
        if PREFIX_RE.match(prefix) and _sweep_one(path, prefix, removed):
            removed.append(f"lease {prefix}")
    return removed


def _sweep_one(path: Path, prefix: str, removed: list[str]) -> bool:
    """Remove one dead owner's leftovers, then its lease; False when the owner lives or another sweep has it.

    The lease file stays in place until its leftovers are gone, so no new owner can claim the prefix
    meanwhile; sweeps running at once (environments starting side by side) take the file's lock, and one
    that gets it after another sweep finished sees a different file (or none) under the name and stops."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False  # released meanwhile
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # another sweep is removing it
        try:
            if os.stat(path).st_ino != os.fstat(fd).st_ino:
                return False
        except FileNotFoundError:
            return False
        if _alive(os.read(fd, 4096).decode(errors="replace")):
            return False
        removed += remove_leftovers(prefix)
        path.unlink(missing_ok=True)
        return True
    finally:
        os.close(fd)
