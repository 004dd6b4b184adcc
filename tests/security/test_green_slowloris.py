"""No unauthenticated caller can hold the green or purple A2A server: a slowloris that trickles request heads from
many connections holds no more than the caps, connections that do not finish a request in time are dropped, and
the agent card and honest requests are answered throughout; request bodies the server cannot take are -32602 with
one log line each. The servers run in processes of the test's own with a descriptor limit of 128, so nothing here
can exhaust the machine's descriptors (the old server sat at its limit and reset honest callers)."""

from __future__ import annotations

import socket
import time

import pytest

from .slowloris import DEADLINE_S, DESCRIPTORS, LIMITS, OVERALL, PER_PEER, UPGRADE, Server, Trickler, status_of

pytest.importorskip("a2a", reason="the a2a-sdk is not installed")
httpx = pytest.importorskip("httpx")


@pytest.fixture
def green(tmp_path):
    server = Server(tmp_path, "listening on ", "serve-green", "--app", "malt", *LIMITS, "--port", "0")
    yield server
    server.close()


def honest(server: Server) -> None:
    """The card, and a JSON-RPC request (an unknown method: answered at once), from 127.0.0.1."""
    card = httpx.get(server.url + ".well-known/agent-card.json", timeout=5)
    assert card.status_code == 200 and "NetArena" in card.json()["name"]
    answer = httpx.post(server.url, json={"jsonrpc": "2.0", "id": 7, "method": "nothing/here"}, timeout=5)
    assert answer.json()["error"]["code"] == -32601


def test_a_slowloris_holds_no_more_than_the_caps_and_honest_callers_are_answered(green):
    one = Trickler(green.port, "127.0.0.2", 3 * PER_PEER)
    many = [Trickler(green.port, f"127.0.0.{3 + index}", PER_PEER) for index in range(14)]  # 136 in all
    beside = Trickler(green.port, "127.0.0.1", 2 * PER_PEER)  # the honest caller's own address: 152 in all
    attackers = [one, *many, beside]
    try:
        started = time.monotonic()
        peak = 0
        while time.monotonic() - started < DEADLINE_S * 0.75:  # within the first deadline: the caps hold
            for attacker in attackers:
                attacker.trickle()
            peak = max(peak, green.descriptors())
            honest(green)
            time.sleep(0.1)
        assert len(one.sockets) <= PER_PEER and len(beside.sockets) <= PER_PEER, (len(one.sockets), len(beside.sockets))
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
    server = Server(tmp_path, "listening on ", "serve-purple", "--agent", "python:pytest_netarena.agents.noop:NoopAgent",
                    *LIMITS, "--port", "0")
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


def test_websocket_handshakes_hold_nothing_and_lock_no_address_out(green):
    """A WebSocket handshake is served as plain HTTP on a counted connection, released like any other: more handshakes
    from one address than its cap leave that address served (the old server upgraded them past its guard, which never
    released them: 8 handshakes, each answered 403 and closed, shut 127.0.0.2 out for good)."""
    handshake = UPGRADE.format(target="/.well-known/agent-card.json", host="x", extra="").encode()
    for _ in range(2 * PER_PEER):
        status = status_of(green.port, handshake, "127.0.0.2")
        assert status.startswith(b"HTTP/1.1 ") and not status.startswith(b"HTTP/1.1 101"), status
    card = status_of(green.port, b"GET /.well-known/agent-card.json HTTP/1.1\r\nHost: x\r\n\r\n", "127.0.0.2")
    assert card == b"HTTP/1.1 200 OK", card
