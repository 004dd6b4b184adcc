"""Attackers and servers of the listener tests: a server of ours in a process of the test's own with few descriptors,
connections that trickle a request head a byte at a time, and a WebSocket upgrade request."""

from __future__ import annotations

import os
import selectors
import socket
import subprocess
import sys
from pathlib import Path

#: a process's descriptor limit: nothing a test does can take the machine's descriptors
DESCRIPTORS = 128
#: lowered through the command line, as an operator would (the defaults are 256 overall, 32 per peer, 10 s)
OVERALL, PER_PEER, DEADLINE_S = 40, 8, 3.0  # a deadline long enough for a server process starved by a busy machine
LIMITS = ("--max-connections", str(OVERALL), "--max-connections-per-peer", str(PER_PEER),
          "--request-deadline", str(DEADLINE_S))
SERVER = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, ({n}, {n}))
from pytest_netarena.cli import main
sys.exit(main(sys.argv[1:]))
"""
#: a WebSocket handshake (a client's request to upgrade the connection), with the target to format in
UPGRADE = ("GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n")


class Server:
    """`netarena ARGV...` in a process of its own with a low descriptor limit; `url` is what it printed after `marker`."""

    def __init__(self, tmp_path: Path, marker: str, *argv: str) -> None:
        self.log = tmp_path / "server.log"
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVER.format(n=DESCRIPTORS), *argv], env=env,
            stdout=subprocess.PIPE, stderr=self.log.open("wb"), text=True)
        assert self.process.stdout is not None
        line = ""
        while marker not in line:
            line = self.process.stdout.readline()
            assert line, self.log.read_text()[-3000:]
        self.url = line.split(marker, 1)[1].strip()
        self.port = int(self.url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


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


def status_of(port: int, request: bytes, address: str = "127.0.0.1", timeout_s: float = 10.0) -> bytes:
    """The status line the server answers a raw request with, sent from `address` on a new connection (b"" if none)."""
    sock = socket.socket()
    sock.bind((address, 0))
    sock.settimeout(timeout_s)
    try:
        sock.connect(("127.0.0.1", port))
        sock.sendall(request)
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer.split(b"\r\n", 1)[0]
    except OSError:
        return b""
    finally:
        sock.close()
