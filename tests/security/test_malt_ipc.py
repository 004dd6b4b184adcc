"""MALT answers share nothing through IPC: no SysV segment, queue or semaphore and no POSIX queue
reaches another answer, and shared memory cannot grow past the answer's memory limit."""

from __future__ import annotations

from .conftest import needs_boxes

#: a counter in a SysV segment, a SysV queue and a POSIX queue of fixed keys: each answer bumps them
COUNTER = '''
import ctypes
IPC_CREAT, O_CREAT, O_RDWR = 0o1000, 0o100, 0o2

def process_graph(graph_data):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    seen = {}
    shmid = libc.shmget(0x4E41, 4096, IPC_CREAT | 0o666)
    if shmid >= 0:
        address = libc.shmat(shmid, None, 0)
        counter = ctypes.c_int.from_address(address)
        counter.value += 1
        seen["shm"] = counter.value
    msqid = libc.msgget(0x4E42, IPC_CREAT | 0o666)
    if msqid >= 0:
        seen["msg_queue"] = msqid
    mq = libc.mq_open(b"/netarena-redteam", O_CREAT | O_RDWR, 0o666, None)
    if mq >= 0:
        seen["mq"] = mq
    with open("/proc/sysvipc/shm") as table:
        seen["segments_here"] = len(table.read().splitlines()) - 1
    with open("/proc/self/status") as status:
        seen["caps"] = [line.split()[1] for line in status if line.startswith(("CapEff", "CapPrm"))]
    return seen
'''

#: shared segments filled and detached one after another: address space stays small, memory would not
HOARD = '''
import ctypes
IPC_CREAT = 0o1000

def process_graph(graph_data):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    held = 0
    for key in range(0x4E50, 0x4E50 + SEGMENTS):
        shmid = libc.shmget(key, SIZE, IPC_CREAT | 0o600)
        if shmid < 0:
            break
        address = libc.shmat(shmid, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            break
        ctypes.memset(address, 1, SIZE)
        libc.shmdt(ctypes.c_void_p(address))
        held += SIZE
    return held
'''


#: the limits of this module's box (the box fixture of conftest)
BOX_LIMITS = {"cpu_s": 5, "memory_mb": 64}


@needs_boxes
def test_answers_share_no_ipc_object_and_keep_no_capability(box):
    reports = [box.run(COUNTER) for _ in range(3)]
    assert all(report.ok for report in reports), reports
    seen = [report.value for report in reports]
    assert all(report.get("shm", 0) <= 1 for report in seen), seen  # the old zygote counted 1, 2, 3
    assert not any("msg_queue" in report or "mq" in report for report in seen), seen
    assert all(report["segments_here"] == 0 for report in seen), seen
    assert all(set(report["caps"]) == {"0000000000000000"} for report in seen), seen


@needs_boxes
def test_shared_memory_does_not_escape_the_memory_limit(box):
    # 64 MiB of address space per answer; 4 x 32 MiB of detached segments would be 128 MiB of host memory
    code = HOARD.replace("SEGMENTS", "4").replace("SIZE", str(32 << 20))
    first = box.run(code)
    assert first.ok, first.error
    assert first.value < 64 << 20, f"an answer held {first.value >> 20} MiB in shared segments"
    after = box.run(COUNTER)
    assert after.ok and after.value["segments_here"] == 0, after


@needs_boxes
def test_an_answer_cannot_pass_its_failure_off_as_the_boxes(box):
    # the child says it is sealed before the code runs: an exit that looks like a failed set-up is the answer's
    result = box.run("import os\ndef process_graph(graph_data):\n    os._exit(70)")
    assert not result.ok and "exit status 70" in result.error
