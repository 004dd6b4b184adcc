"""WebSocket (RFC 6455) on an upgraded HTTP/1.1 connection, with Kubernetes' channel protocol for exec.

kubectl (1.30+) runs `exec` over a WebSocket speaking `v5.channel.k8s.io`: every binary message starts
with a channel byte (0 stdin, 1 stdout, 2 stderr, 3 the final Status, 4 terminal resize) and, in v5,
a message `[255, channel]` closes that channel (stdin's end). Frames from the client are masked and
bounded here: a message larger than MAX_MESSAGE closes the connection.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import threading

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#: the channel protocols served, best first (v4 has no close signal: stdin ends with the connection)
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
#: the largest message accepted from a client (kubectl sends stdin in pieces of at most 32 KiB)
MAX_MESSAGE = 1 << 20
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()


def choose_protocol(offered: str) -> str | None:
    """The channel protocol to speak, from the client's Sec-WebSocket-Protocol list (None: none we speak)."""
    names = [name.strip() for name in offered.split(",") if name.strip()]
    return next((name for name in PROTOCOLS if name in names), None)


def handshake(key: str, protocol: str) -> bytes:
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept_key(key)}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n").encode()


def _unmask(data: bytes, mask: bytes) -> bytes:
    key = (mask * (len(data) // 4 + 1))[:len(data)]
    return (int.from_bytes(data, "big") ^ int.from_bytes(key, "big")).to_bytes(len(data), "big")


class Closed(Exception):
    """The peer closed the WebSocket (or broke the protocol)."""


class ChannelSocket:
    """One exec session's WebSocket: send on a channel, receive the client's stdin, send the final Status."""

    def __init__(self, rfile, wfile, protocol: str, connection: int | None = None) -> None:
        self.rfile, self.wfile = rfile, wfile
        self.protocol = protocol
        self.connection = connection  #: the connection's file descriptor (a runtime watches it for the hang-up)
        self._write_lock = threading.Lock()
        self.closed = False

    # -- writing --------------------------------------------------------------------------------
    def _frame(self, opcode: int, payload: bytes) -> None:
        size = len(payload)
        if size < 126:
            header = struct.pack("!BB", 0x80 | opcode, size)
        elif size < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 126, size)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 127, size)
        with self._write_lock:
            if self.closed:
                raise Closed("the WebSocket is closed")
            self.wfile.write(header + payload)
            self.wfile.flush()

    def send(self, channel: int, data: bytes) -> None:
        self._frame(OP_BINARY, bytes([channel]) + data)

    def send_status(self, status: dict) -> None:
        """The session's outcome on the error channel (kubectl turns a failure into its exit status)."""
        self.send(ERROR, json.dumps(status, separators=(",", ":")).encode())

    def close(self, code: int = 1000) -> None:
        try:
            self._frame(OP_CLOSE, struct.pack("!H", code))
        except (Closed, OSError):
            pass
        self.closed = True

    # -- reading --------------------------------------------------------------------------------
    def _read(self, size: int) -> bytes:
        data = self.rfile.read(size)
        if len(data) < size:
            raise Closed("the connection ended")
        return data

    def receive(self) -> tuple[int, bytes]:
        """The next (channel, data) the client sends; raises Closed when it closes."""
        parts: list[bytes] = []
        total = 0
        while True:
            first, second = self._read(2)
            opcode, final = first & 0x0F, first & 0x80
            size = second & 0x7F
            if size == 126:
                size = struct.unpack("!H", self._read(2))[0]
            elif size == 127:
                size = struct.unpack("!Q", self._read(8))[0]
            if not second & 0x80:
                raise Closed("a client frame was not masked")
            total += size
            if total > MAX_MESSAGE:
                raise Closed(f"a message larger than {MAX_MESSAGE} bytes")
            mask = self._read(4)
            payload = _unmask(self._read(size), mask) if size else b""
            if opcode == OP_CLOSE:
                self.close()
                raise Closed("the client closed the WebSocket")
            if opcode == OP_PING:
                self._frame(OP_PONG, payload)
                continue
            if opcode == OP_PONG:
                continue
            parts.append(payload)
            if final:
                message = b"".join(parts)
                if not message:
                    parts, total = [], 0
                    continue
                return message[0], message[1:]
