"""Attacks on the box itself (the layer every app shares): files, processes, signals, network, resources, output."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
import time

import pytest
from pathlib import Path

from pytest_netarena import sandbox
from pytest_netarena.sandbox import views

from .conftest import accepted, needs_boxes, needs_root_boxes, python_box

SHELL = sandbox.BoxSpec(programs=views.programs(views.SHELL_TOOLS), limits=sandbox.Limits(wall_s=10))


def shell(command: str, spec: sandbox.BoxSpec = SHELL) -> sandbox.box.Finished:
    return sandbox.run(spec, ["bash", "-c", command])


@needs_boxes
def test_host_files_are_invisible_by_path_and_by_proc(canary: Path) -> None:
    secret = canary.read_text().strip()
    result = shell(f"cat {canary}; cat /proc/1/root{canary}; ls {canary.parent}; ls {canary.parent.parent} /root /var 2>&1; "
                   f"cat /proc/*/cwd/{canary.name} 2>&1; find / -name {canary.name} 2>/dev/null")
    assert secret not in result.text
    assert "No such file or directory" in result.text


@needs_boxes
def test_nothing_outside_tmp_and_home_is_writable() -> None:
    result = shell("for p in / /usr/bin /usr/lib /etc /etc/passwd /proc/sys/kernel/hostname /proc/sys/net/ipv4/ip_forward;"
                   " do (echo x > $p/probe || echo x > $p) 2>/dev/null && echo WROTE:$p; done; "
                   "echo ok > /tmp/t && echo ok > ~/t && cat /tmp/t ~/t")
    assert "WROTE" not in result.text
    assert result.text.count("ok") == 2


@needs_boxes
def test_hostname_writes_stay_in_the_box() -> None:
    before = socket.gethostname()
    shell("hostname attacker; echo attacker > /proc/sys/kernel/hostname")
    assert socket.gethostname() == before


@needs_root_boxes
def test_the_box_runs_with_a_private_uid_and_no_capabilities() -> None:
    result = shell("id -u; grep -E '^Cap(Eff|Prm|Amb|Bnd)' /proc/self/status")
    lines = result.text.split()
    assert int(lines[0]) >= sandbox.box.UID_BASE
    assert all(value == "0000000000000000" for value in lines[2::2])


@needs_boxes
def test_background_processes_die_with_the_box() -> None:
    marker = f"{time.time_ns() % 10**9}"
    shell(f"(sleep {marker}.5 &) ; nohup sleep {marker}.6 >/dev/null 2>&1 & disown; setsid sleep {marker}.7 & echo started")
    time.sleep(0.2)
    survivors = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
    assert survivors == []


@needs_boxes
def test_signals_cannot_reach_processes_outside_the_box() -> None:
    victim = subprocess.Popen(["sleep", "60"])
    try:
        result = shell(f"kill -9 {victim.pid}; kill -9 -1; echo done")
        time.sleep(0.1)
        assert victim.poll() is None
        assert "done" in result.text or result.returncode is not None
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait()


@needs_boxes
def test_no_network_reaches_the_harness(listener) -> None:
    server, port = listener
    shell(f"exec 3<>/dev/tcp/127.0.0.1/{port}; echo hi >&3")
    assert not accepted(server)


@needs_boxes
def test_unix_sockets_of_the_host_cannot_be_reached(tmp_path: Path) -> None:
    path = tmp_path / "harness.sock"
    abstract = b"\0netarena-redteam-" + os.urandom(4).hex().encode()
    named = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hidden = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        named.bind(str(path))
        hidden.bind(abstract)
        for server in (named, hidden):
            server.listen(1)
            server.settimeout(0.5)
        spec, python = python_box()
        code = (f"import socket\nfor a in ({str(path)!r}, {abstract!r}):\n"
                "    s = socket.socket(socket.AF_UNIX)\n"
                "    try: s.connect(a); print('CONNECTED', a)\n"
                "    except OSError as e: print('refused', e)\n")
        result = sandbox.run(spec, [*python, "-c", code])
        assert "CONNECTED" not in result.text and result.text.count("refused [") == 2, result.text
        assert not accepted(named) and not accepted(hidden)
    finally:
        named.close()
        hidden.close()


@needs_root_boxes
def test_a_fork_bomb_is_bounded_and_ends_with_the_box() -> None:
    started = time.monotonic()
    result = sandbox.run(sandbox.BoxSpec(programs=SHELL.programs, limits=sandbox.Limits(wall_s=3, processes=32)),
                         ["bash", "-c", "echo uid=$(id -u); b(){ b|b& }; b; sleep 1; echo alive"])
    assert time.monotonic() - started < 15
    assert result.returncode is not None or result.timed_out
    uid = int(result.text.split("uid=", 1)[1].split()[0])
    assert uid >= sandbox.box.UID_BASE  # the bomb ran under the box's private uid
    # the kernel reaps asynchronously: wait for this box's uid to have no process left (other boxes, e.g.
    # a parallel worker's, may run meanwhile and are not this test's business)
    deadline = time.monotonic() + 10
    while processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_of(uid) == []


def processes_of(uid: int) -> list[int]:
    """Processes running under uid (none may outlive its box)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except OSError:
                pass
    return found


@needs_boxes
def test_a_memory_bomb_hits_the_address_space_limit() -> None:
    spec, python = python_box(memory_bytes=256 << 20)
    result = sandbox.run(spec, [*python, "-c", "x = bytearray(1 << 30); print('ALLOCATED')"])
    assert "ALLOCATED" not in result.text and "MemoryError" in result.text


@needs_boxes
def test_given_files_show_under_tmp_and_home_read_only_and_the_environment_is_only_the_given_one() -> None:
    # files are mounted after the tmpfs folders, which would hide them otherwise
    spec = sandbox.BoxSpec(programs=SHELL.programs, files={"/tmp/given": b"in-tmp\n", f"{sandbox.box.HOME}/given": b"at-home\n"},
                           env={"GIVEN": "yes", "LANG": "C"}, limits=sandbox.Limits(wall_s=10))
    result = sandbox.run(spec, ["bash", "-c", "cat /tmp/given ~/given; (echo x > /tmp/given) 2>/dev/null || echo RO; "
                                              "env | sort | cut -d= -f1 | tr '\\n' ' '; echo; echo $GIVEN $LANG"])
    lines = result.text.splitlines()
    assert lines[:3] == ["in-tmp", "at-home", "RO"]
    assert set(lines[3].split()) <= {"GIVEN", "HOME", "LANG", "PATH", "PWD", "SHLVL", "TERM", "TMPDIR", "USER", "_"}
    assert lines[4] == "yes C"


@needs_boxes
def test_tmp_is_capped_and_files_are_capped() -> None:
    spec = sandbox.BoxSpec(programs=SHELL.programs, limits=sandbox.Limits(tmp_bytes=1 << 20, file_bytes=8 << 20))
    result = sandbox.run(spec, ["bash", "-c", "head -c 4000000 /dev/zero > /tmp/big; wc -c < /tmp/big"])
    assert int(result.text.strip().splitlines()[-1]) <= 1 << 20


@needs_boxes
def test_an_output_flood_is_cut_while_reading() -> None:
    spec = sandbox.BoxSpec(programs=SHELL.programs, limits=sandbox.Limits(output_bytes=4096, wall_s=30))
    started = time.monotonic()
    result = sandbox.run(spec, ["bash", "-c", "yes flood"])
    assert result.truncated and len(result.output) == 4096
    assert time.monotonic() - started < 10


@needs_boxes
def test_a_hanging_command_is_killed_at_the_wall_clock_limit() -> None:
    spec = sandbox.BoxSpec(programs=SHELL.programs, limits=sandbox.Limits(wall_s=0.5))
    result = sandbox.run(spec, ["bash", "-c", "echo begin; exec sleep 30"])
    assert result.timed_out and result.text.startswith("begin")


@needs_boxes
@pytest.mark.parametrize("in_namespace", [False, True])
def test_a_spawned_box_outlives_the_thread_that_started_it(in_namespace: bool) -> None:
    """bwrap's --die-with-parent follows the starting *thread*: a box started from a short-lived thread
    (an episode thread, a worker pool thread, a namespace-entering thread) must not die with it."""
    namespace = sandbox.NetNamespace.create() if in_namespace else None
    spec = sandbox.BoxSpec(programs=SHELL.programs, network=namespace)
    started: dict = {}

    def start() -> None:  # the thread ends only once the box is surely running (bwrap armed its signal)
        box = sandbox.spawn(spec, ["bash", "-c", "echo ready; read x; echo got $x"])
        started.update(box=box, first=box.stdout.readline())

    thread = threading.Thread(target=start)
    thread.start()
    thread.join()
    try:
        assert started["first"] == b"ready\n"
        time.sleep(0.2)  # were the box tied to the ended thread, it would be killed by now
        out, _ = started["box"].communicate(b"hello\n", timeout=20)
        assert out == b"got hello\n"
    finally:
        if namespace is not None:
            namespace.close()
