"""No caller can hold an MCP listener: `netarena mcp --http` and a CLI box's listener (its MCP server and model relay)
run on the same guarded listener as the A2A servers. A slowloris holds no more than the caps, even from the honest
client's own address, connections that do not finish a request in time are dropped, honest requests are answered
throughout, and a WebSocket handshake reaches no app code (an unauthenticated one reached the MCP SDK, which failed
with a 500).
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
from pathlib import Path

import pytest

from pytest_netarena.serving import ConnectionLimits, HttpOnly

from ..mcp_server.conftest import toy_app  # noqa: F401
from .cli_stand_in import Provider, play, program_folder
from .conftest import needs_root_boxes
from .slowloris import DEADLINE_S, DESCRIPTORS, LIMITS, OVERALL, PER_PEER, UPGRADE, Server, Trickler, status_of

pytest.importorskip("mcp", reason="the MCP SDK is not installed")
httpx = pytest.importorskip("httpx")

TOKEN = "test-token-of-this-listener"


@pytest.fixture
def mcp_http(tmp_path: Path):
    server = Server(tmp_path, "serving ", "mcp", "--app", "malt", "--option", "malt-topology=synthetic:200",
                    "--http", "127.0.0.1:0", "--token", TOKEN, "--out", str(tmp_path / "reports"), *LIMITS)
    yield server
    server.close()


class Honest:
    """An MCP client with the token, from 127.0.0.1: one session, then a ping per call, each on a new connection."""

    def __init__(self, url: str) -> None:
        self.url, self.headers = url, {"Authorization": f"Bearer {TOKEN}",
                                       "Accept": "application/json, text/event-stream"}
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "honest", "version": "1"}}}
        answer = httpx.post(url, json=hello, headers=self.headers, timeout=10)
        assert answer.status_code == 200 and "serverInfo" in answer.text, answer.text[:500]
        self.headers["mcp-session-id"] = answer.headers["mcp-session-id"]
        done = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers,
                          timeout=10)
        assert done.status_code == 202, done.text[:300]
        self.pings = 0

    def ping(self) -> None:
        self.pings += 1
        answer = httpx.post(self.url, json={"jsonrpc": "2.0", "id": self.pings, "method": "ping"},
                            headers=self.headers, timeout=5)
        assert answer.status_code == 200 and '"result"' in answer.text, answer.text[:300]


def test_a_slowloris_on_netarena_mcp_http_holds_no_more_than_the_caps(mcp_http):
    honest = Honest(mcp_http.url)
    beside = Trickler(mcp_http.port, "127.0.0.1", 3 * PER_PEER)  # the honest client's own address
    many = [Trickler(mcp_http.port, f"127.0.0.{2 + index}", PER_PEER) for index in range(14)]  # 136 in all
    attackers = [beside, *many]
    try:
        started, peak = time.monotonic(), 0
        while time.monotonic() - started < DEADLINE_S * 0.75:  # within the first deadline: the caps hold
            for attacker in attackers:
                attacker.trickle()
            peak = max(peak, mcp_http.descriptors())
            honest.ping()
            time.sleep(0.1)
        assert len(beside.sockets) <= PER_PEER, len(beside.sockets)
        assert sum(len(a.sockets) for a in attackers) <= OVERALL
        assert peak < DESCRIPTORS - 20, peak
        while time.monotonic() - started < DEADLINE_S * 2.5:  # still trickling, but no request finished in time
            for attacker in attackers:
                attacker.trickle()
            honest.ping()
            time.sleep(0.2)
        assert sum(len(a.sockets) for a in attackers) == 0, [len(a.sockets) for a in attackers]
    finally:
        for attacker in attackers:
            attacker.close()
    assert "Traceback" not in mcp_http.log.read_text()


def test_sessions_left_open_stay_capped_and_lock_no_client_out(mcp_http):
    """A client that opens a session per call and never ends one (the MCP Inspector's CLI), or a token holder doing it
    on purpose: the server keeps at most MAX_SESSIONS, a new session ends the oldest idle one, and a session with a
    request in flight (an open event stream) is never ended. The old server answered every session past the eighth
    503 until the first ones idled out (`--idle-timeout`, 300 s)."""
    from pytest_netarena.mcp.transport import MAX_SESSIONS

    busy = Honest(mcp_http.url)
    with httpx.Client(timeout=10) as streaming, streaming.stream("GET", mcp_http.url, headers=busy.headers) as events:
        assert events.status_code == 200  # its event stream stays open: a request in flight all along
        opened = [Honest(mcp_http.url) for _ in range(3 * MAX_SESSIONS)]  # each was answered 200
        for client in opened[-(MAX_SESSIONS - 1):]:
            client.ping()
        busy.ping()
        for client in opened[:-(MAX_SESSIONS - 1)]:  # ended to make room: unknown now, never served again
            answer = httpx.post(client.url, json={"jsonrpc": "2.0", "id": 99, "method": "ping"},
                                headers=client.headers, timeout=5)
            assert answer.status_code == 404, answer.text[:300]
    assert "Traceback" not in mcp_http.log.read_text()


def test_a_websocket_handshake_reaches_no_app_code(mcp_http):
    host = f"127.0.0.1:{mcp_http.port}"
    anonymous = UPGRADE.format(target="/mcp", host=host, extra="").encode()
    assert status_of(mcp_http.port, anonymous) == b"HTTP/1.1 401 Unauthorized"  # was 500: the SDK got the scope
    with_token = UPGRADE.format(target="/mcp", host=host, extra=f"Authorization: Bearer {TOKEN}\r\n").encode()
    status = status_of(mcp_http.port, with_token)
    assert status.startswith(b"HTTP/1.1 4"), status  # served as a plain GET, which the SDK refuses; never 101
    Honest(mcp_http.url).ping()
    assert "Traceback" not in mcp_http.log.read_text()


def sockets_open() -> int:
    """This process's open sockets (the box's listener, its connections and the relay's, all live in the harness)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


#: from inside the box: 300 connections, each sending part of a head and a byte more every 0.1 s; model calls on
#: fresh connections during the flood, after its first deadline and at its end (each marked for the provider)
BOX_FLOOD = r"""
fds=()
for ((i = 0; i < 300; i++)); do
  exec {fd}<>/dev/tcp/127.0.0.1/$port && fds+=($fd) && printf 'GET /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: ' >&$fd
done
echo "OPENED ${#fds[@]}"
trickle() {
  for ((round = 0; round < $1; round++)); do
    for fd in "${fds[@]}"; do printf a >&$fd 2>/dev/null; done
    ${0%/bash}/sleep 0.1
  done
}
ask POST '/model/v1/messages?beta=true' $'X-Phase: during\r\n'
ask GET /mcp $'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n'
trickle 25
ask POST '/model/v1/messages?beta=true' $'X-Phase: late\r\n'
trickle 10
ask POST '/model/v1/messages?beta=true' $'X-Phase: end\r\n'
"""
BOX_LIMITS = ConnectionLimits(request_s=1.5, connections=64, per_peer=16)


@needs_root_boxes
def test_a_slowloris_from_inside_a_cli_box_holds_no_more_than_its_cap(toy_app, tmp_path):
    folder = program_folder(tmp_path)
    samples: list[tuple[float, int]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.monotonic(), sockets_open()))
            time.sleep(0.05)

    with Provider() as provider:
        baseline = sockets_open()
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            profile, _ = play(toy_app, folder, BOX_FLOOD, provider.url, listener_limits=BOX_LIMITS)
        finally:
            stop.set()
            sampler.join()
    answers = re.findall(r"^ASKED (\S+ \S+) -> (.*)$", profile.output, re.M)
    assert "OPENED 300" in profile.output, profile.output[-2000:]
    phases = {seen.headers.get("x-phase"): seen.at for seen in provider.seen}
    assert set(phases) == {"during", "late", "end"}, answers
    peak = max(count for _, count in samples) - baseline
    assert peak <= BOX_LIMITS.per_peer + 8, f"{peak} more sockets at the peak (the old listener held all 300)"
    late = [count - baseline for at, count in samples if phases["late"] <= at <= phases["end"]]
    assert late and max(late) <= 8, late  # every trickling connection was closed at the deadline
    # honest model calls were answered during the flood and after; the handshake was no WebSocket and no app code ran
    assert [status for target, status in answers if "model" in target] == ["HTTP/1.1 200 OK"] * 3, answers
    assert [status for target, status in answers if "/mcp" in target] == ["HTTP/1.1 401 Unauthorized"], answers


def test_no_scope_but_http_reaches_the_app():
    """The gate in front of every app: a WebSocket scope is closed before it is accepted, the lifespan reaches only an
    app that asked for it, an unknown scope nothing; an HTTP request goes through."""
    reached: list[str] = []

    async def app(scope, receive, send) -> None:
        reached.append(scope["type"])

    async def knock(gate: HttpOnly, kind: str) -> list[dict]:
        sent: list[dict] = []

        async def receive() -> dict:
            return {"type": f"{kind}.connect"}

        async def send(message: dict) -> None:
            sent.append(message)

        await gate(scope={"type": kind, "path": "/mcp"}, receive=receive, send=send)
        return sent

    closed = asyncio.run(knock(HttpOnly(app), "websocket"))
    assert closed == [{"type": "websocket.close", "code": 1008}]
    for kind in ("lifespan", "webtransport"):
        assert asyncio.run(knock(HttpOnly(app), kind)) == []
    assert reached == []
    asyncio.run(knock(HttpOnly(app), "http"))
    asyncio.run(knock(HttpOnly(app, lifespan=True), "lifespan"))
    assert reached == ["http", "lifespan"]
