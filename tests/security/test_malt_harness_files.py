"""MALT answers cannot read the harness: its files, the run's reports, its /proc, or earlier answers in memory."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path

import pytest

from .conftest import malt_box, needs_boxes, needs_root_boxes


@pytest.fixture
def reports(tmp_path: Path) -> tuple[Path, str, Path, str]:
    """A run folder as the plugin writes it, world-readable (the worst case), holding an oracle's answer and the
    run secret that keys the hidden parameters (run.json's private part)."""
    secret = f"ORACLE-ANSWER-{secrets.token_hex(8)}"
    run_secret = secrets.token_hex(16)
    run = tmp_path / "reports" / "20260101-000000-1-abcd"
    run.mkdir(parents=True)
    (run / "episodes.jsonl").write_text(json.dumps({"agent": "builtin:oracle", "reply": secret}) + "\n")
    (run / "run.json").write_text(json.dumps({"secret_in_use": True, "private": {"secret": run_secret}}))
    for path in (tmp_path, tmp_path / "reports", run):
        path.chmod(0o755)
    for path in (run / "episodes.jsonl", run / "run.json"):
        path.chmod(0o644)
    return run / "episodes.jsonl", secret, run / "run.json", run_secret


# Switch off every guard an in-process design could have had (audit hooks found through gc, sys,
# ctypes), then read the given paths by every route: open(), raw libc open(2), /proc/<pid>/root.
DISARM_AND_READ = '''
import ctypes, gc, os, sys

def disarm():
    for thing in gc.get_objects():
        if callable(thing) and getattr(thing, "__name__", "") in ("hook", "audit_hook"):
            try:
                thing.__code__ = (lambda event, args: None).__code__
            except Exception:
                pass
    try:
        sys.addaudithook(lambda *a: None)
    except Exception:
        pass

def raw_read(path):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.open(path.encode(), os.O_RDONLY)
    if fd < 0:
        return "errno %d" % ctypes.get_errno()
    buf = ctypes.create_string_buffer(65536)
    n = libc.read(fd, buf, 65536)
    return buf.raw[:max(n, 0)].decode(errors="replace")

def process_graph(graph_data):
    disarm()
    found = []
    for path in PATHS:
        for route in (path, "/proc/1/root" + path, "/proc/self/root" + path):
            try:
                found.append(open(route).read())
            except OSError as error:
                found.append(str(error))
            found.append(raw_read(route))
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for name in ("environ", "cmdline", "cwd/episodes.jsonl"):
                try:
                    found.append(open("/proc/%s/%s" % (pid, name), "rb").read().decode(errors="replace"))
                except OSError as error:
                    found.append(str(error))
    return {"type": "text", "data": "\\n".join(found)}
'''


@needs_boxes
def test_disarmed_answer_cannot_read_a_harness_file_or_the_runs_episodes(box, canary, reports):
    episodes, oracle_secret, run_json, run_secret = reports
    paths = [str(canary), str(episodes), str(run_json), str(Path(__file__).resolve())]
    result = box.run(f"PATHS = {paths!r}\n{DISARM_AND_READ}")
    assert result.ok, result.error
    seen = result.value["data"]
    assert canary.read_text().strip() not in seen and oracle_secret not in seen and run_secret not in seen
    assert "No such file or directory" in seen


@needs_boxes
def test_proc_shows_nothing_of_the_harness(monkeypatch):
    secret = f"API-KEY-{secrets.token_hex(8)}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    sandbox = malt_box()
    try:
        code = (f"import os\nHARNESS = {os.getpid()}\n"
                "def process_graph(graph_data):\n"
                "    seen = []\n"
                "    for path in ('/proc/%d/environ' % HARNESS, '/proc/%d/cmdline' % HARNESS, '/proc/1/environ',\n"
                "                 '/proc/2/environ', '/proc/self/environ', '/proc/self/mountinfo'):\n"
                "        try:\n            seen.append(open(path, 'rb').read().decode(errors='replace'))\n"
                "        except OSError as error:\n            seen.append(str(error))\n"
                "    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
                "    return {'type': 'list', 'data': [pids, seen]}")
        result = sandbox.run(code)
    finally:
        sandbox.close()
    assert result.ok, result.error
    pids, seen = result.value["data"]
    text = "\n".join(seen)
    assert secret not in text and "pytest" not in text and str(Path.cwd()) not in text
    assert len(pids) <= 3  # its own PID namespace: the box init, the zygote, itself


@needs_root_boxes
def test_an_earlier_answer_is_not_in_the_memory_a_later_answer_inherits(box):
    token = f"EARLIER-ANSWER-{secrets.token_hex(8)}"
    earlier = box.run(f"SECRET = {token!r}\ndef process_graph(graph_data):\n"
                      "    return {'type': 'text', 'data': SECRET + SECRET}")
    assert earlier.ok and token in earlier.value["data"]
    # reads its own address space directly (every heap and anonymous region it inherited from the zygote)
    # (it never holds the token itself: it knows the prefix and the token's hash)
    scan = (f"PREFIX, DIGEST = b'EARLIER-ANSWER-', {hashlib.sha256(token.encode()).hexdigest()!r}\n"
            "def process_graph(graph_data):\n"
            "    hits, regions, inherited = 0, 0, 0\n"
            "    for line in open('/proc/self/maps').read().splitlines():\n"
            "        fields = line.split()\n"
            "        start, end = (int(x, 16) for x in fields[0].split('-'))\n"
            "        name = fields[5] if len(fields) > 5 else ''\n"
            "        if 'r' not in fields[1] or (name and name not in ('[heap]', '[stack]')) or end - start > 1 << 30:\n"
            "            continue\n"
            "        regions += 1\n"
            "        data = ctypes.string_at(start, end - start)\n"
            "        inherited += data.count(b'ju1.a1.m1.s2c1.p1')\n"
            "        at = data.find(PREFIX)\n"
            "        while at >= 0:\n"
            "            hits += hashlib.sha256(data[at:at + 31]).hexdigest() == DIGEST\n"
            "            at = data.find(PREFIX, at + 1)\n"
            "    parent = os.getppid()\n"
            "    try:\n"
            "        open('/proc/%d/mem' % parent, 'rb').read(1)\n"
            "        parent_mem = 'readable'\n"
            "    except OSError as error:\n"
            "        parent_mem = str(error)\n"
            "    return {'type': 'list', 'data': [hits, regions, inherited, parent_mem]}\n")
    result = box.run("import ctypes, hashlib, os\n" + scan)
    assert result.ok, result.error
    hits, regions, inherited, parent_mem = result.value["data"]
    assert regions > 3 and inherited > 0  # the scan really reads what it inherited (the topology's names)
    assert hits == 0
    assert parent_mem != "readable"
