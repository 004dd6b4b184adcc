"""The kernel filter of every box: compiled seccomp programs refusing new namespaces, mounts and other kernel surface.

A box is made with its namespaces already in place; nothing in it needs to make more. So its filter
(bubblewrap's `--seccomp FD`, loaded just before the box's command runs, in every process of the box)
refuses every system call that makes or enters a namespace (`unshare`, `setns`, `clone` with a
namespace flag; `clone3`, whose flags the filter cannot read, answers ENOSYS so that the C library
falls back to `clone`), mounts in either API, and the rest of the kernel surface behind most container
escapes that no box's work needs: keys, BPF, perf events, userfaultfd, io_uring, ptrace, module and
kexec loading, handles to files by number, terminal input injection. Refused calls fail with EPERM;
a call through another architecture's numbers (x86's 32-bit and x32 entry points) kills the process.

The MALT zygote's box allows exactly one `unshare`: a user and IPC namespace for each answer, which
the answer's process makes before it seals itself with `answer_program`, refusing every `unshare`
and the System V and POSIX IPC calls whose memory escapes its address-space limit.
"""

from __future__ import annotations

import functools
import os
import struct

CLONE_NEWTIME, CLONE_NEWNS, CLONE_NEWCGROUP = 0x80, 0x20000, 0x02000000
CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER = 0x04000000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
#: clone's first argument carries the exit signal in its low byte (where unshare has CLONE_NEWTIME)
CLONE_NAMESPACES = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
#: what the zygote's children may unshare, once each, before they seal themselves
ANSWER_NAMESPACES = CLONE_NEWUSER | CLONE_NEWIPC
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
EPERM, ENOSYS = 1, 38

#: refused with EPERM in every box: namespaces, mounts, and kernel surface no box's work needs
REFUSED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace", "process_vm_readv", "process_vm_writev",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
    "acct", "syslog", "quotactl", "quotactl_fd", "lookup_dcookie", "vhangup", "uselib", "iopl", "ioperm",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "nfsservctl", "name_to_handle_at",
    "open_by_handle_at", "fanotify_init",
)
#: refused in an answer's process too: memory outside its address-space limit (their IPC namespace isolates the rest)
ANSWER_REFUSED = ("shmget", "msgget", "semget", "mq_open")

#: per machine (`uname -m`): its seccomp AUDIT_ARCH and system call numbers (from the kernel's unistd headers)
ARCHITECTURES = {
    "x86_64": (0xC000003E, {
        "ioctl": 16, "shmget": 29, "clone": 56, "semget": 64, "msgget": 68, "ptrace": 101, "syslog": 103,
        "uselib": 134, "vhangup": 153, "pivot_root": 155, "adjtimex": 159, "chroot": 161, "acct": 163,
        "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
        "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "nfsservctl": 180,
        "lookup_dcookie": 212, "clock_settime": 227, "mq_open": 240, "kexec_load": 246, "add_key": 248,
        "request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298, "fanotify_init": 300,
        "name_to_handle_at": 303, "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308,
        "process_vm_readv": 310, "process_vm_writev": 311, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
        "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
        "clone3": 435, "mount_setattr": 442, "quotactl_fd": 443,
    }),
    "aarch64": (0xC00000B7, {
        "lookup_dcookie": 18, "ioctl": 29, "umount2": 39, "mount": 40, "pivot_root": 41, "nfsservctl": 42,
        "chroot": 51, "vhangup": 58, "quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104,
        "init_module": 105, "delete_module": 106, "clock_settime": 112, "syslog": 116, "ptrace": 117, "reboot": 142,
        "settimeofday": 170, "adjtimex": 171, "mq_open": 180, "msgget": 186, "semget": 190, "shmget": 194,
        "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220, "swapon": 224, "swapoff": 225,
        "perf_event_open": 241, "fanotify_init": 262, "name_to_handle_at": 264, "open_by_handle_at": 265,
        "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271, "finit_module": 273,
        "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426,
        "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
        "fsmount": 432, "fspick": 433, "clone3": 435, "mount_setattr": 442, "quotactl_fd": 443,
    }),
}

# classic BPF, as seccomp runs it: load a word of struct seccomp_data, compare, return a verdict
_LOAD, _AND, _JEQ, _JGE, _JSET, _RET = 0x20, 0x54, 0x15, 0x35, 0x45, 0x06
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  #: offsets in seccomp_data (arguments: their low 32 bits, little-endian)
_ALLOW, _KILL_PROCESS = 0x7FFF0000, 0x80000000
X32_BIT = 0x40000000


def _error(number: int) -> int:
    return 0x00050000 | number  # SECCOMP_RET_ERRNO


class _Program:
    """A straight-line filter built test by test; each test either returns a verdict or falls through."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int, int, int]] = []

    def op(self, code: int, jt: int = 0, jf: int = 0, k: int = 0) -> None:
        self.code.append((code, jt, jf, k))

    def refuse_call(self, number: int, errno: int) -> None:
        self.op(_LOAD, k=_NR)
        self.op(_JEQ, 0, 1, number)
        self.op(_RET, k=_error(errno))

    def refuse_when(self, number: int, argument: int, test: int, value: int, errno: int = EPERM) -> None:
        """Refuse call `number` when its argument (low 32 bits) meets test (_JSET: any of these bits; _JEQ: equals)."""
        self.op(_LOAD, k=_NR)
        self.op(_JEQ, 0, 3, number)
        self.op(_LOAD, k=argument)
        self.op(test, 0, 1, value)
        self.op(_RET, k=_error(errno))

    def refuse_unless(self, number: int, argument: int, allowed: int, errno: int = EPERM) -> None:
        """Refuse call `number` unless its argument (low 32 bits) equals `allowed`."""
        self.op(_LOAD, k=_NR)
        self.op(_JEQ, 0, 3, number)
        self.op(_LOAD, k=argument)
        self.op(_JEQ, 1, 0, allowed)
        self.op(_RET, k=_error(errno))

    def bytes(self) -> bytes:
        self.op(_RET, k=_ALLOW)
        return b"".join(struct.pack("=HBBI", *instruction) for instruction in self.code)


def machine() -> str:
    return os.uname().machine


def supported() -> bool:
    """Whether boxes here get a kernel filter (its system call numbers are known for this architecture)."""
    return machine() in ARCHITECTURES


def _start(arch: int) -> _Program:
    program = _Program()
    program.op(_LOAD, k=_ARCH)
    program.op(_JEQ, 1, 0, arch)
    program.op(_RET, k=_KILL_PROCESS)  # another architecture's numbers (x86's int 0x80): none of ours apply
    program.op(_LOAD, k=_NR)
    program.op(_JGE, 0, 1, X32_BIT)  # x86's x32 numbers (harmless elsewhere: no call is numbered that high)
    program.op(_RET, k=_KILL_PROCESS)
    return program


@functools.lru_cache(maxsize=None)
def box_program(unshare_allowed: int = 0) -> bytes:
    """The filter of a box (`--seccomp`); `unshare_allowed`: the one flag set `unshare` may take (the zygote's)."""
    arch, numbers = ARCHITECTURES[machine()]
    program = _start(arch)
    if unshare_allowed:
        program.refuse_unless(numbers["unshare"], _ARG0, unshare_allowed)
    for name in REFUSED:
        if name in numbers and not (unshare_allowed and name == "unshare"):
            program.refuse_call(numbers[name], EPERM)
    program.refuse_when(numbers["clone"], _ARG0, _JSET, CLONE_NAMESPACES)
    program.refuse_call(numbers["clone3"], ENOSYS)
    for request in (TIOCSTI, TIOCLINUX):
        program.refuse_when(numbers["ioctl"], _ARG1, _JEQ, request)
    return program.bytes()


@functools.lru_cache(maxsize=None)
def answer_program() -> bytes:
    """The filter a zygote's child adds once its own namespaces are made: no more unshare, no SysV or POSIX IPC."""
    arch, numbers = ARCHITECTURES[machine()]
    program = _start(arch)
    for name in ("unshare", *ANSWER_REFUSED):
        program.refuse_call(numbers[name], EPERM)
    return program.bytes()
