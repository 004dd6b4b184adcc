"""No unauthenticated caller can hold the green or purple A2A server: a slowloris that trickles request heads from
many connections holds no more than the caps, connections that do not finish a request in time are dropped, and
the agent card and honest requests are answered throughout; request bodies the server cannot take are -32602 with
one log line each. The servers run in processes of the test's own with a descriptor limit of 128, so nothing here
can exhaust the machine's descriptors (the old server sat at its limit and reset honest callers)."""

from __future__ import annotations

import json
import os
import selectors
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("a2a", reason="the a2a-sdk is not installed")
httpx = pytest.importorskip("httpx")

DESCRIPTORS = 128
#: lowered through the command line, as an operator would (the defaults are 256 overall, 32 per peer, 10 s)
OVERALL, PER_PEER, DEADLINE_S = 40, 8, 3.0  # a deadline long enough for a server process starved by a busy machine
LIMITS = ["--max-connections", str(OVERALL), "--max-connections-per-peer", str(PER_PEER),
          "--request-deadline", str(DEADLINE_S)]
SERVER = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, ({n}, {n}))
from pytest_netarena.cli import main
sys.exit(main(sys.argv[1:]))
"""


class Server:
    """`netarena serve-green` or `serve-purple` in a process of its own, with a low descriptor limit."""

    def __init__(self, tmp_path: Path, *argv: str) -> None:
        self.log = tmp_path / "server.log"
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER.format(n=DESCRIPTORS), *argv, "--port", "0"], env=env,
            stdout=subprocess.PIPE, stderr=self.log.open("wb"), text=True)
        line = self.process.stdout.readline()
        assert "listening on" in line, (line, self.log.read_text()[-3000:])
        self.url = line.rsplit(" ", 1)[1].strip()
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def green(tmp_path):
    server = Server(tmp_path, "serve-green", "--app", "malt", *LIMITS)
    yield server
    server.close()


class Trickler:
    """Connections from one loopback address, each sending a request head one byte at a time and never ending it."""

    HEAD = b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10_000

    def __init__(self, port: int, address: str, count: int) -> None:
        self.selector = selectors.DefaultSelector()
        self.sockets = []
        for _ in range(count):
            sock = socket.socket()
            sock.bind((address, 0))
            sock.setblocking(False)
            try:
                sock.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            self.sockets.append(sock)
        self.sent = 0

    def trickle(self) -> None:
        """One more byte on every connection still open (the server closing one shows as an error or EOF)."""
        alive = []
        for sock in self.sockets:
            try:
                if sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            except OSError:
                sock.close()
                continue
            try:
                sock.send(self.HEAD[self.sent:self.sent + 1])
            except BlockingIOError:
                pass
            except OSError:
                sock.close()
                continue
            alive.append(sock)
        self.sockets = alive
        self.sent += 1

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


def honest(server: Server) -> None:
    """The card, and a JSON-RPC request (an unknown method: answered at once), from 127.0.0.1."""
    card = httpx.get(server.url + ".well-known/agent-card.json", timeout=5)
    assert card.status_code == 200 and "NetArena" in card.json()["name"]
    answer = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 7, "method": "nothing/here"}, timeout=5)
    assert answer.json()["error"]["code"] == -32601


def test_a_slowloris_holds_no_more_than_the_caps_and_honest_callers_are_answered(green):
    one = Trickler(green.port, "127.0.0.2", 3 * PER_PEER)
    many = [Trickler(green.port, f"127.0.0.{3 + index}", PER_PEER) for index in range(14)]  # 136 in all
    attackers = [one, *many]
    try:
        started = time.monotonic()
        peak = 0
        while time.monotonic() - started < DEADLINE_S * 0.75:  # within the first deadline: the caps hold
            for attacker in attackers:
                attacker.trickle()
            peak = max(peak, green.descriptors())
            honest(green)
            time.sleep(0.1)
        assert len(one.sockets) <= PER_PEER, len(one.sockets)
        assert sum(len(a.sockets) for a in attackers) <= OVERALL
        assert peak < DESCRIPTORS - 20, peak
        while time.monotonic() - started < DEADLINE_S * 2.5:  # still trickling, but no request finished in time
            for attacker in attackers:
                attacker.trickle()
            honest(green)
            time.sleep(0.2)
        assert sum(len(a.sockets) for a in attackers) == 0, [len(a.sockets) for a in attackers]
    finally:
        for attacker in attackers:
            attacker.close()
    log = green.log.read_text()
    # the server's own lines are bounded (once per 30 s per peer); the SDK logs one line per honest request
    own = [line for line in log.splitlines() if not line.startswith("Request Error (ID: 7)")]
    assert "Traceback" not in log and len(own) < 40, log[-3000:]


def test_the_purple_server_is_guarded_alike(tmp_path):
    server = Server(tmp_path, "serve-purple", "--agent", "python:pytest_netarena.agents.noop:NoopAgent", *LIMITS)
    attacker = Trickler(server.port, "127.0.0.2", 3 * PER_PEER)
    try:
        for _ in range(5):
            attacker.trickle()
            time.sleep(0.1)
        assert len(attacker.sockets) <= PER_PEER
        card = httpx.get(server.url + ".well-known/agent-card.json", timeout=5)
        assert card.status_code == 200
    finally:
        attacker.close()
        server.close()


#: bodies the server cannot take as JSON-RPC: the request is at fault (-32602), never an internal error
DEEP = "[" * 100_000 + "]" * 100_000
HOSTILE_BODIES = {
    "5,000-digit id": '{"jsonrpc": "2.0", "id": ' + "9" * 5000 + ', "method": "message/send", "params": {}}',
    "5,000-digit param": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": ' + "9" * 5000 + "}}",
    "30-digit param": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": ' + "9" * 30 + "}}",
    "nested 100,000 deep": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": ' + DEEP + "}}",
    "nested 1,000 deep": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": '
                         + "[" * 1000 + "]" * 1000 + "}}",
    "NaN": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": NaN}}',
    "Infinity": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": -Infinity}}',
    "1e400": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"n": 1e400}}',
    "a message that is a number": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": 5}}',
    "parts that are not a list": '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
                                 '{"role": "ROLE_USER", "messageId": "m", "parts": 5}}}',
    "a deep message": '{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {"parts": '
                      + "[" * 500 + "]" * 500 + "}}}",
    "an id that is an object": '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "SendMessage", "params": {"x": 1}}',
}


def test_bodies_the_server_cannot_take_are_invalid_params_logged_in_one_line_each(green):
    before = green.log.read_text()
    for name, body in HOSTILE_BODIES.items():
        response = httpx.post(green.url, content=body, headers={"content-type": "application/json"}, timeout=30)
        error = response.json().get("error") or {}
        assert error.get("code") in (-32602, -32600), (name, response.text[:300])
        assert len(response.text) < 2000, (name, len(response.text))
    logged = green.log.read_text()[len(before):]
    honest(green)
    assert "Traceback" not in logged and len(logged.splitlines()) <= len(HOSTILE_BODIES), logged[:3000]
    assert all(len(line) < 400 for line in logged.splitlines()), logged[:3000]


def test_a_trickled_body_or_a_trickled_second_request_is_closed_at_the_deadline(green):
    """The deadline covers the head and the body, and starts again for each request of a kept-alive connection."""
    body = socket.create_connection(("127.0.0.1", green.port))
    body.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
    kept = socket.create_connection(("127.0.0.1", green.port))
    kept.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
    assert kept.recv(65536).startswith(b"HTTP/1.1 200")
    started, open_ = time.monotonic(), {"body": body, "kept": kept}
    while open_ and time.monotonic() - started < DEADLINE_S * 3:
        for name, sock in list(open_.items()):
            try:
                sock.send(b" " if name == "body" else b"G")
                if sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                pass
            except OSError:
                del open_[name]
        time.sleep(0.2)
    assert not open_, list(open_)
    honest(green)
    body.close()
    kept.close()
