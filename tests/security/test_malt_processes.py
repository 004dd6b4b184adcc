"""MALT answers cannot signal or trace other processes: the test's canary, the zygote, other workers' boxes."""

from __future__ import annotations

import os
import signal
import subprocess

from .conftest import malt_box, needs_boxes, needs_root_boxes


ATTACK = '''
import ctypes, os, signal
PTRACE_ATTACH, PTRACE_SEIZE = 16, 0x4206

def process_graph(graph_data):
    libc = ctypes.CDLL(None, use_errno=True)
    report = []
    targets = {CANARY, os.getppid(), 1} | {int(p) for p in os.listdir("/proc") if p.isdigit()}
    targets.discard(os.getpid())
    for pid in sorted(targets):
        for sig in (signal.SIGKILL, signal.SIGSTOP):
            try:
                os.kill(pid, sig)
                report.append("killed %d" % pid)
            except OSError as error:
                report.append("kill %d: %s" % (pid, error.strerror))
        for request in (PTRACE_ATTACH, PTRACE_SEIZE):
            if libc.ptrace(request, pid, None, None) == 0:
                report.append("traced %d" % pid)
    for sig in (signal.SIGKILL,):
        try:
            os.kill(-1, sig)
            report.append("kill -1 sent")
        except OSError as error:
            report.append("kill -1: %s" % error.strerror)
    return {"type": "list", "data": report}
'''


@needs_boxes
def test_answers_cannot_kill_or_trace_the_canary_the_zygote_or_another_box():
    canary = subprocess.Popen(["sleep", "300"])
    first, second = malt_box(), malt_box()
    try:
        assert second.run("def process_graph(graph_data):\n    return 1").ok
        other_zygote = second.process
        result = first.run(f"CANARY = {canary.pid}\n{ATTACK}")
        assert result.ok, result.error
        assert not any(line.startswith(("killed", "traced")) for line in result.value["data"]), result.value
        assert canary.poll() is None
        assert first.process is not None and first.process.poll() is None  # the same zygote goes on
        assert second.process is other_zygote and other_zygote.poll() is None
        assert first.run("def process_graph(graph_data):\n    return 2").value == 2
        assert second.run("def process_graph(graph_data):\n    return 3").value == 3
    finally:
        first.close()
        second.close()
        canary.send_signal(signal.SIGKILL)
        canary.wait()


@needs_root_boxes
def test_each_answer_gets_a_private_uid_and_leaves_no_process_behind():
    box = malt_box()
    try:
        code = ("import os\ndef process_graph(graph_data):\n"
                "    try:\n        os.fork()\n        forked = 'forked'\n"
                "    except OSError as error:\n        forked = error.strerror\n"
                "    return [os.getuid(), forked]")
        uids = set()
        for _ in range(3):
            result = box.run(code)
            assert result.ok, result.error
            uid, forked = result.value
            uids.add(uid)
            assert forked == "Resource temporarily unavailable"
        assert len(uids) == 3 and 0 not in uids
        leftovers = [pid for pid in os.listdir("/proc") if pid.isdigit() and _uid(pid) in uids]
        assert leftovers == []
    finally:
        box.close()


def _uid(pid: str) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
