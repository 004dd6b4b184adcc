"""MALT answers cannot exhaust the machine: writes (host folders, box tmpfs, file size), memory, forks, CPU."""

from __future__ import annotations

import os
import secrets

from .conftest import needs_boxes, needs_root_boxes


#: the limits of this module's box (the box fixture of conftest)
BOX_LIMITS = {"cpu_s": 2, "memory_mb": 256}


@needs_boxes
def test_answers_cannot_write_anywhere(box):
    marker = f"malt-redteam-{secrets.token_hex(6)}"
    folders = ["/tmp", "/var/tmp", "/dev/shm", "/run", "/home/agent", "/", "/opt/python/lib", os.getcwd(),
               "/proc/self/cwd"]
    code = (f"import os\nMARKER, FOLDERS = {marker!r}, {folders!r}\n"
            "def process_graph(graph_data):\n"
            "    report = []\n"
            "    for folder in FOLDERS:\n"
            "        path = os.path.join(folder, MARKER)\n"
            "        try:\n"
            "            with open(path, 'wb') as out:\n"
            "                for _ in range(256):\n"
            "                    out.write(b'x' * (1 << 20))\n"
            "            report.append('WROTE %s %d' % (path, os.path.getsize(path)))\n"
            "        except OSError as error:\n"
            "            report.append('%s: %s' % (path, error.strerror))\n"
            "    return {'type': 'list', 'data': report}")
    result = box.run(code)
    assert result.ok, result.error
    assert not any(line.startswith("WROTE") for line in result.value["data"]), result.value
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run", os.getcwd()):
        assert not os.path.exists(os.path.join(folder, marker))


@needs_root_boxes
def test_the_boxes_own_tmpfs_is_not_writable_by_answers(box):
    code = ("import os\ndef process_graph(graph_data):\n"
            "    return [oct(os.stat(p).st_mode & 0o7777) for p in ('/tmp', '/dev/shm', '/run', '/home/agent')]")
    result = box.run(code)
    assert result.ok and set(result.value) == {"0o755"}, result


@needs_boxes
def test_a_memory_bomb_is_an_agent_error(box):
    result = box.run("def process_graph(graph_data):\n    hog = []\n    while True:\n        hog.append(bytearray(1 << 24))")
    assert not result.ok and "MemoryError" in result.error
    assert box.run("def process_graph(graph_data):\n    return 1").value == 1


@needs_boxes
def test_a_fork_bomb_and_threads_are_refused(box):
    code = ("import os, threading\ndef process_graph(graph_data):\n"
            "    try:\n        threading.Thread(target=print).start()\n        thread = 'started'\n"
            "    except RuntimeError as error:\n        thread = str(error)\n"
            "    while True:\n        os.fork()")
    result = box.run(code)
    assert not result.ok and "Resource temporarily unavailable" in result.error, result.error
    assert box.run("import threading\ndef process_graph(graph_data):\n    return threading.active_count()").value == 1


@needs_boxes
def test_cpu_burn_stops_at_the_cpu_limit(box):
    result = box.run("def process_graph(graph_data):\n    while True:\n        pass")
    assert not result.ok and result.error == "CPU time limit of 2 s exceeded"
