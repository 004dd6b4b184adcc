"""One sealed box: the bubblewrap command line for a spec, and running an argv in a fresh box.

A box has its own PID, IPC, UTS (and, unless it joins one, network) namespaces, so everything it
starts dies with it and it sees no other process; a kernel filter refusing new namespaces, mounts and
other kernel surface (seccomp.py); a read-only view of only the programs it is given and the shared
libraries they need (libraries.py), copied into the store (store.py) so that its mount table names no
host path; an empty private /tmp and home on size-capped tmpfs; no view of the checkout, the reports,
the kubeconfig's folder or any other harness file; no capabilities beyond the ones its spec names; a
private uid with resource limits and a control group of its own capping memory, processes and CPU
together (as root, cgroups.py); bubblewrap's options passed through a file descriptor, so the box's
process 1 shows none of them; and output read through a bounded pipe.
"""

from __future__ import annotations

import functools
import itertools
import os
import queue
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..core.process import Finished, run_bounded
from . import cgroups, libraries, seccomp, views
from .store import store
from .netns import NetNamespace
from .userns import UserNetNamespace
from .support import Support, support

HOME = "/home/agent"
#: private uids of root-made boxes: unique per (harness process, box slot), far from real users
UID_BASE = 1_500_000_000
_slots = itertools.count()
_slot_lock = threading.Lock()


@dataclass(frozen=True)
class Limits:
    """Resource limits of one box (every process in it)."""

    wall_s: float = 20.0
    cpu_s: int = 20
    memory_bytes: int = 1 << 30  #: address space per process
    box_memory_bytes: int = 512 << 20  #: memory of all the box's processes and its tmpfs files together (its cgroup)
    cpus: float = 1.0  #: CPUs the whole box may use at once (its cgroup)
    processes: int = 64  #: processes and threads of the box's uid (root-made boxes) and of its cgroup
    file_bytes: int = 8 << 20  #: largest file it may write
    open_files: int = 256
    output_bytes: int = 64 << 10  #: what is read of its output before it is stopped
    tmp_bytes: int = 16 << 20  #: size of /tmp and of the home folder, each


@dataclass(frozen=True)
class BoxSpec:
    """What one box may see and do."""

    programs: Mapping[str, str] = field(default_factory=dict)  #: name in /usr/bin -> host file
    binds: tuple[tuple[str, str], ...] = ()  #: extra read-only (host path, box path); not under /tmp, /run or the home folder (their tmpfs mounts come later and would hide it)
    #: host folders bound writable (host path, box path), as binds; the box's uid must own them (a workspace)
    writable: tuple[tuple[str, str], ...] = ()
    files: Mapping[str, bytes] = field(default_factory=dict)  #: box path -> read-only content
    network: NetNamespace | UserNetNamespace | None = None  #: join this namespace; None: an empty one of its own
    caps: tuple[str, ...] = ()  #: e.g. ("NET_ADMIN", "NET_RAW"); only root-made boxes keep any
    writable_net_sysctl: bool = False  #: /proc/sys/net of its network namespace is writable
    env: Mapping[str, str] = field(default_factory=dict)
    limits: Limits = Limits()
    hostname: str = "box"
    #: the command is trusted harness code that limits its own children (the fork server's zygote): in a
    #: root-made box it stays uid 0 with just `caps` and drops its children to a private uid; in either
    #: mode it gets no limit on processes. Agent text never runs as it
    trusted_root: bool = False
    #: root-made boxes only: the uid to run as (None: a fresh private one); boxes sharing it share its process limit
    uid: int | None = None
    #: a host folder bound writable as the box's / (a pod's file system, shared by its containers and exec
    #: sessions): it already holds the mount points (`usr`, `etc`, `proc`, `dev`, `tmp`, ... and the `bin`,
    #: `lib` links) as root-owned entries of a sticky folder, so its owner may add files but never swap them
    root: str | None = None
    #: the one set of namespace flags `unshare` may take in the box (the MALT zygote's answers make a user and
    #: IPC namespace each, then refuse every unshare); 0: none
    unshare_allowed: int = 0


def private_uid() -> int:
    """A uid no other live box shares (the limit on processes is counted per uid)."""
    with _slot_lock:
        slot = next(_slots) % 64
    return UID_BASE + (os.getpid() % 300_000) * 64 + slot


@functools.lru_cache(maxsize=1)
def nproc_counted_per_user_namespace() -> bool:
    """Whether RLIMIT_NPROC counts a user's processes per user namespace (Linux 5.14 and later), so that a
    box made without root can bound its own processes; before, the count was every process of the user."""
    release = os.uname().release.split("-")[0].split(".")
    try:
        return (int(release[0]), int(release[1])) >= (5, 14)
    except (IndexError, ValueError):
        return False


def _limits_argv(limits: Limits, count_processes: bool) -> list[str]:
    argv = ["prlimit", f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_s}", f"--fsize={limits.file_bytes}",
            f"--nofile={limits.open_files}", "--core=0"]
    if count_processes:
        argv.append(f"--nproc={limits.processes}")
    return [*argv, "--"]


def _memfd(name: str, content: bytes) -> int:
    fd = os.memfd_create(name, 0)  # not CLOEXEC: bwrap reads it
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def command(spec: BoxSpec, argv: Sequence[str], where: Support | None = None, *,
            kernel_filter: bool = True) -> tuple[list[str], list[int]]:
    """(full argv, file descriptors to pass) that run argv in a fresh box; the caller closes the fds.

    The box gets no control group of its own (prepare() makes one): for callers that put it in theirs (pods).
    kernel_filter=False leaves the seccomp filter out, only to measure its cost (benchmarks/box.py)."""
    where = where or support()
    root = where.root
    uid = (spec.uid or private_uid()) if root else os.getuid()
    count_inside = not root and not spec.trusted_root and nproc_counted_per_user_namespace()
    options = _namespaces(spec, where)
    options += _file_system(spec, root, count_inside)
    fds: list[int] = []
    options += _files(spec, uid, fds)
    options += _environment(spec)
    if kernel_filter and seccomp.supported():
        fds.append(_memfd("filter", seccomp.box_program(spec.unshare_allowed)))
        options += ["--seccomp", str(fds[-1])]
    privileges, inner = _privileges(spec, root, uid, count_inside)
    options += privileges
    # options through a descriptor: the box's process 1 (bwrap) shows `bwrap --args N`, not the host paths they name
    fds.append(_memfd("options", b"".join(option.encode() + b"\0" for option in options)))
    limits = _limits_argv(spec.limits, count_processes=root and not spec.trusted_root)
    entering = store().entering(spec.network)  # into the store's namespaces, where it has its own (a plain user)
    return [*entering, *limits, where.bwrap, "--args", str(fds[-1]), "--", *inner, *argv], fds


def _enters_network(spec: BoxSpec) -> bool:
    """Whether command()'s argv enters the spec's network namespace itself (with the store's namespaces)."""
    return spec.network is not None and bool(store().entering(spec.network)) and hasattr(spec.network, "nsenter_options")


@dataclass
class Launch:
    """A box ready to start: its argv and the descriptors to pass, and its control group (None where boxes get
    none). close_fds() once it started; ended() once its process is gone (removes the group)."""

    argv: list[str]
    fds: list[int]
    group: cgroups.BoxGroup | None
    enters_network: bool = False  #: argv enters the spec's network namespace itself: start it from any thread

    def close_fds(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds = []

    def ended(self) -> None:
        self.close_fds()
        if self.group is not None:
            self.group.remove()
            self.group = None


def prepare(spec: BoxSpec, argv: Sequence[str], where: Support | None = None, *, cgroup: bool = True,
            kernel_filter: bool = True) -> Launch:
    """command(), started through a control group of the box's own where one can be made (cgroup=False: none, only
    to measure its cost)."""
    full, fds = command(spec, argv, where, kernel_filter=kernel_filter)
    limits = spec.limits
    try:
        group = cgroups.make(limits.box_memory_bytes, limits.processes, limits.cpus) if cgroup else None
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return Launch(group.argv(full) if group is not None else full, fds, group, _enters_network(spec))


def _namespaces(spec: BoxSpec, where: Support) -> list[str]:
    box = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--hostname", spec.hostname]
    if spec.network is None:
        box.append("--unshare-net")
    if not where.root:
        box.append("--unshare-user")
    return box


def _file_system(spec: BoxSpec, root: bool, count_inside: bool) -> list[str]:
    """The mounts: the root or its folders, libraries, the programs' view as /usr/bin, /etc, /proc, tmpfs. Every
    read-only bind comes from the store."""
    held = store()
    programs = _programs(spec, root, count_inside)
    program_view = held.files(programs)
    binds = [(held.copy(source), target) for source, target in spec.binds]
    box = ["--bind", spec.root, "/"] if spec.root is not None else []
    if spec.root is None:  # bwrap would make the parents of mount points 0700, closed to the box's uid
        parents = {"/usr", "/usr/bin", "/usr/share", "/etc", "/home"}
        for _, target in (*binds, *spec.writable):
            parents.update(str(parent) for parent in PurePosixPath(target).parents if str(parent) != "/")
        for directory in sorted(parents, key=lambda path: (path.count("/"), path)):
            box += ["--perms", "0755", "--dir", directory]
    library_view = libraries.view(held, (program_view, *(source for source, _ in binds)), tuple(sorted(programs)))
    for target, source in library_view.items():
        box += ["--ro-bind", source, target]
    box += ["--ro-bind", program_view, "/usr/bin"]
    if spec.root is None:
        box += ["--symlink", "usr/bin", "/bin", "--symlink", "usr/bin", "/sbin", "--symlink", "bin", "/usr/sbin",
                "--symlink", "usr/lib", "/lib"]
        if "/usr/lib64" in library_view:
            box += ["--symlink", "usr/lib64", "/lib64"]
    for source, target in _host_files(held):
        box += ["--ro-bind", source, target]
    for source, target in binds:
        box += ["--ro-bind", source, target]
    for source, target in spec.writable:
        box += ["--bind", source, target]
    box += ["--proc", "/proc", "--dev", "/dev", "--ro-bind", "/proc/sys", "/proc/sys"]
    if spec.writable_net_sysctl:  # /proc/sys read-only but the net tree, which shows the box's own namespace
        box += ["--bind", "/proc/sys/net", "/proc/sys/net"]
    for folder in ("/tmp", HOME, "/run") if spec.root is None else ("/run",):  # a root keeps its own /tmp
        box += ["--size", str(spec.limits.tmp_bytes), "--perms", "01777", "--tmpfs", folder]
    return box


def _programs(spec: BoxSpec, root: bool, count_inside: bool) -> dict[str, str]:
    """The box's /usr/bin: its spec's programs and the harness's own tools the box's command line runs."""
    programs = dict(spec.programs)
    if root:
        programs["setpriv"] = views.find_program("setpriv") or "/usr/bin/setpriv"
    if count_inside:
        programs["prlimit"] = views.find_program("prlimit") or "/usr/bin/prlimit"
    return programs


@functools.lru_cache(maxsize=4)
def _host_files(held) -> tuple[tuple[str, str], ...]:
    """(store copy, box path) of the host's /etc files and folders every box gets, those that exist (read once)."""
    found = []
    for path in (*views.ETC_FILES, *views.ETC_DIRS):
        if os.path.exists(path):
            found.append((held.copy(path), path))
    return tuple(found)


def _files(spec: BoxSpec, uid: int, fds: list[int]) -> list[str]:
    """Read-only files from memory, each through a memfd appended to `fds`; mounted last, so that one placed
    under /tmp or the home folder is not hidden by its tmpfs."""
    files = {"/etc/passwd": views.passwd(uid), "/etc/group": views.group(uid), "/etc/hosts": views.HOSTS,
             "/etc/hostname": f"{spec.hostname}\n".encode(), **spec.files}
    box: list[str] = []
    for path, content in files.items():
        fd = _memfd(os.path.basename(path), content)
        fds.append(fd)
        box += ["--perms", "0444", "--ro-bind-data", str(fd), path]
    return box


def _environment(spec: BoxSpec) -> list[str]:
    box = ["--clearenv", "--chdir", HOME if spec.root is None else "/"]
    env = {"PATH": "/usr/bin:/bin", "HOME": HOME, "USER": "agent", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
           "TERM": "dumb", **spec.env}
    for key, value in env.items():
        box += ["--setenv", key, value]
    return box


def _privileges(spec: BoxSpec, root: bool, uid: int, count_inside: bool) -> tuple[list[str], list[str]]:
    """(bwrap's capability options, what runs before the command inside: dropping it to its uid, or bounding its
    processes)."""
    box = ["--cap-drop", "ALL"]
    if root and spec.trusted_root:
        for cap in spec.caps:
            box += ["--cap-add", f"CAP_{cap.upper().removeprefix('CAP_')}"]
        return box, []
    if root:
        keep = [cap.upper().removeprefix("CAP_") for cap in spec.caps]
        for cap in ("SETUID", "SETGID", "SETPCAP", *keep):
            box += ["--cap-add", f"CAP_{cap}"]
        listed = "".join(f",+{cap.lower()}" for cap in keep)
        return box, ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", f"--inh-caps=-all{listed}",
                     f"--ambient-caps=-all{listed}", f"--bounding-set=-all{listed}", "--no-new-privs", "--"]
    if count_inside:  # set inside: the count is the box's user namespace's, not every process of the user
        return box, ["prlimit", f"--nproc={spec.limits.processes}", "--"]
    return box, []


def run(spec: BoxSpec, argv: Sequence[str], where: Support | None = None,
        on_start: Callable[[subprocess.Popen], None] | None = None) -> Finished:
    """Run argv in a fresh box; its output is read through a bounded pipe. Raises OSError if it cannot start.

    on_start gets the box's process once it runs: core.process.kill_group on it ends the box early."""
    launch = prepare(spec, argv, where)

    def bounded(argv: list[str], passed: list[int]) -> Finished:
        return run_bounded(argv, spec.limits.wall_s, env={"PATH": views.HOST_PATH}, limit=spec.limits.output_bytes,
                           pass_fds=passed, on_start=on_start)

    try:
        # --die-with-parent is a parent-death signal, sent when the *thread* that started bwrap ends: the
        # thread that enters the namespace must be the one that waits for the box
        if spec.network is not None and not launch.enters_network:
            return spec.network.run_in(bounded, launch.argv, launch.fds)
        return bounded(launch.argv, launch.fds)
    finally:
        launch.ended()


def spawn(spec: BoxSpec, argv: Sequence[str], where: Support | None = None) -> subprocess.Popen:
    """Start a long-lived box whose stdin and stdout are pipes to the caller (stderr discarded).

    The wall-clock limit does not apply: the caller bounds every exchange itself. A launcher thread
    starts the box and stays until it ends (a parent-death signal follows the starting thread, so
    the box must not outlive it, whichever thread called spawn).
    """
    launch = prepare(spec, argv, where)
    handed: queue.Queue = queue.Queue(maxsize=1)

    def start_and_wait(argv: list[str], passed: list[int]) -> None:
        try:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, env={"PATH": views.HOST_PATH},
                                       start_new_session=True, pass_fds=passed)
        except BaseException as error:  # noqa: BLE001  (re-raised in the caller's thread)
            handed.put(error)
            return
        handed.put(process)
        launch.close_fds()
        process.wait()

    def start() -> None:
        try:
            if spec.network is not None and not launch.enters_network:
                spec.network.run_in(start_and_wait, launch.argv, launch.fds)
            else:
                start_and_wait(launch.argv, launch.fds)
        except BaseException as error:  # noqa: BLE001  (the namespace could not be entered)
            if handed.empty():
                handed.put(error)
        finally:
            launch.ended()

    threading.Thread(target=start, name="netarena-box-launcher", daemon=True).start()
    started = handed.get()
    if isinstance(started, BaseException):
        raise started
    return started


def run_unboxed(spec: BoxSpec, argv: Sequence[str], on_start: Callable[[subprocess.Popen], None] | None = None) -> Finished:
    """--unsandboxed: the same argv with the same time and output limits, but no box (for machines without one)."""
    env = {"PATH": views.HOST_PATH, "HOME": os.environ.get("HOME", "/root"), "LANG": "C.UTF-8", **spec.env}
    full = [*_limits_argv(spec.limits, count_processes=False), *argv]

    def bounded(argv: list[str], _: list[int]) -> Finished:
        return run_bounded(argv, spec.limits.wall_s, env=env, limit=spec.limits.output_bytes, on_start=on_start)

    return spec.network.run_in(bounded, full) if spec.network is not None else bounded(full, [])
