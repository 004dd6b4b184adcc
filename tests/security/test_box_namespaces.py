"""Red team (issue 43, item 7): code in a box makes namespaces of its own, where it is uid 0 with every capability,
mounts a 12 GiB tmpfs past the box's cap and administers a network. The box's kernel filter refuses every way in,
in boxes of every kind (k8s action, route node, CLI agent, pod, MALT answer) and for every call a box could use."""

from __future__ import annotations

import os

import pytest

from pytest_netarena import sandbox

from .conftest import malt_box, needs_boxes, python_box
from .kinds import pod_cluster, shell_in_box  # noqa: F401 - fixtures

#: from a shell: a user and mount namespace with a tmpfs past any cap, a user and network namespace, and entering
#: namespaces by path (`-Urm` and `-Urn`: util-linux's and busybox's unshare both read them)
ESCAPES = ("unshare -Urm sh -c 'grep CapEff /proc/self/status; mount -t tmpfs -o size=12g none /tmp && echo MOUNTED'; "
           "unshare -Urn sh -c 'echo NETWORK-ADMIN-AS-$(id -u)'; "
           "unshare -U sh -c 'echo USERNS-MADE'; "
           "nsenter --user=/proc/self/ns/user --mount=/proc/self/ns/mnt true && echo ENTERED; echo END")
FULL_CAPS = "000001ffffffffff"


def assert_refused(output: str) -> None:
    assert "END" in output, output
    for made in ("MOUNTED", "NETWORK-ADMIN-AS-0", "USERNS-MADE", "ENTERED", FULL_CAPS):
        assert made not in output, output
    assert output.count("Operation not permitted") >= 3, output  # each unshare ran and was refused


def test_no_box_makes_a_namespace_or_mounts(shell_in_box, request) -> None:
    kind = request.node.callspec.params["shell_in_box"]
    added = () if kind == "pod" else ("unshare", "mount", "nsenter")
    assert_refused(shell_in_box(ESCAPES, added))


#: the same from a MALT answer, whose only language is Python: ctypes straight to the C library
MALT_ESCAPE = """
import ctypes
def process_graph(graph_data):
    libc = ctypes.CDLL(None, use_errno=True)
    found = {}
    for name, flags in (("user+mount", 0x10000000 | 0x20000), ("user", 0x10000000), ("user+net", 0x10000000 | 0x40000000),
                        ("mount", 0x20000), ("ipc", 0x08000000)):
        made = libc.unshare(flags) == 0
        found[name] = "made" if made else ctypes.get_errno()
        if made and name == "user+mount":
            found["tmpfs"] = "mounted" if libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=12g") == 0 else ctypes.get_errno()
    return found
"""


@needs_boxes
def test_a_malt_answer_makes_no_namespace_and_mounts_nothing() -> None:
    box = malt_box()
    try:
        result = box.run(MALT_ESCAPE)
        again = box.run("def process_graph(graph_data):\n    return graph_data.number_of_nodes()")
    finally:
        box.close()
    assert result.ok, result.error
    assert result.value == {"user+mount": 1, "user": 1, "user+net": 1, "mount": 1, "ipc": 1}  # EPERM, each
    assert again.ok and again.value == 200  # the zygote still makes each answer's own IPC namespace


#: every way in a box's programs could take, straight to the kernel; each prints NAME=errno (0: it worked)
CALLS = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, number, *args):
    result = libc.syscall(number, *(ctypes.c_long(a) for a in args))
    error = ctypes.get_errno() if result == -1 else 0
    if name == "clone" and result == 0:
        os._exit(0)  # the child of a clone that worked: gone at once
    print(f"{name}={error}", flush=True)
net = os.open("/proc/self/ns/net", os.O_RDONLY)
call("unshare", 272, 0x10000000)
call("clone", 56, 0x10000000 | 17, 0, 0, 0, 0)
call("clone3", 435, 0, 0)
call("setns", 308, net, 0x40000000)
call("mount", 165, 0, 0, 0, 0, 0)
call("fsopen", 430, 0, 0)
call("open_tree", 428, -100, 0, 1)
call("keyctl", 250, 0, -3, 0)
call("bpf", 321, 0, 0, 0)
call("perf_event_open", 298, 0, 0, -1, -1, 0)
call("io_uring_setup", 425, 1, 0)
call("userfaultfd", 323, 1)
call("ptrace", 101, 0, 0, 0, 0)
print("END")
"""
EXPECTED = {"unshare": "1", "clone": "1", "clone3": "38", "setns": "1", "mount": "1", "fsopen": "1", "open_tree": "1",
            "keyctl": "1", "bpf": "1", "perf_event_open": "1", "io_uring_setup": "1", "userfaultfd": "1", "ptrace": "1"}


@needs_boxes
def test_every_namespace_mount_and_kernel_surface_call_is_refused() -> None:
    spec, python = python_box()
    result = sandbox.run(spec, [*python, "-c", CALLS])
    assert result.text.rstrip().endswith("END"), result.text
    found = dict(line.split("=", 1) for line in result.text.splitlines() if "=" in line)
    assert found == EXPECTED  # EPERM everywhere; clone3 ENOSYS, so the C library falls back to clone, which is read


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86's other entry points only")
@needs_boxes
def test_a_call_through_another_architectures_numbers_kills_the_process() -> None:
    spec, python = python_box()
    # x86-64's x32 ABI: the unshare number with bit 30 set would otherwise reach the kernel's x32 table
    code = "import ctypes; libc = ctypes.CDLL(None); print('BEFORE', flush=True); libc.syscall(0x40000000 | 272, 0)\nprint('AFTER')"
    result = sandbox.run(spec, [*python, "-c", code])
    assert "BEFORE" in result.text and "AFTER" not in result.text and result.returncode != 0, result
