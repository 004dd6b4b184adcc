"""Just enough HTTP/2 for gRPC health checks (grpc.health.v1.Health/Check): a stand-in's answer and the kubelet's probe.

The stand-in answers every call on a connection as a health check saying SERVING (it cannot tell
calls apart without an HPACK decoder, and needs none: only health checks reach a stand-in's gRPC
ports). The probe sends a real Check request, so it is answered by any gRPC server, and reads the
status from the response message (field 1 of HealthCheckResponse, SERVING = 1).
"""

from __future__ import annotations

import asyncio
import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
SERVING = 1
#: bytes a stand-in reads from one gRPC connection at most, and streams it answers
MAX_BYTES = 64 * 1024
MAX_STREAMS = 32


def frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack("!I", len(payload))[1:] + bytes([kind, flags]) + struct.pack("!I", stream) + payload


def _string(text: str) -> bytes:
    data = text.encode()
    assert len(data) < 127
    return bytes([len(data)]) + data


def _literal(index: int, value: str) -> bytes:
    """A header field without indexing whose name is static table entry `index` (4-bit prefix)."""
    prefix = bytes([index]) if index < 15 else bytes([0x0F, index - 15])
    return prefix + _string(value)


def _literal_new(name: str, value: str) -> bytes:
    return b"\x00" + _string(name) + _string(value)


def message(payload: bytes) -> bytes:
    """A gRPC length-prefixed message (not compressed)."""
    return b"\x00" + struct.pack("!I", len(payload)) + payload


RESPONSE_HEADERS = b"\x88" + _literal(31, "application/grpc")  # :status 200, content-type
TRAILERS = _literal_new("grpc-status", "0")
SERVING_RESPONSE = message(b"\x08\x01")


async def _read_frame(reader: asyncio.StreamReader) -> tuple[int, int, int, bytes]:
    header = await reader.readexactly(9)
    length = int.from_bytes(header[:3], "big")
    if length > 16384:
        raise ValueError("a frame larger than the default maximum")
    return header[3], header[4], int.from_bytes(header[5:9], "big") & 0x7FFFFFFF, await reader.readexactly(length)


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer health checks on a connection whose preface was already read."""
    writer.write(frame(SETTINGS, 0, 0))
    received, answered = 0, 0
    while answered < MAX_STREAMS:
        kind, flags, stream, payload = await _read_frame(reader)
        received += 9 + len(payload)
        if received > MAX_BYTES:
            return
        if kind == SETTINGS and not flags & ACK:
            writer.write(frame(SETTINGS, ACK, 0))
        elif kind == PING and not flags & ACK:
            writer.write(frame(PING, ACK, 0, payload))
        elif kind == GOAWAY:
            return
        elif kind in (HEADERS, DATA) and flags & END_STREAM and stream:
            writer.write(frame(HEADERS, END_HEADERS, stream, RESPONSE_HEADERS)
                         + frame(DATA, 0, stream, SERVING_RESPONSE)
                         + frame(HEADERS, END_HEADERS | END_STREAM, stream, TRAILERS))
            answered += 1
        await writer.drain()


def check_request(authority: str, service: str = "") -> bytes:
    """The client's preface, settings and one Health/Check call on stream 1."""
    headers = (b"\x83\x86" + _literal(4, "/grpc.health.v1.Health/Check") + _literal(1, authority)
               + _literal(31, "application/grpc") + _literal_new("te", "trailers"))
    body = (b"\x0a" + _string(service)) if service else b""
    return (PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, 1, headers)
            + frame(DATA, END_STREAM, 1, message(body)))


async def check(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, authority: str,
                service: str = "") -> int | None:
    """Send a Health/Check and return the status the server reports (None: no answer message)."""
    writer.write(check_request(authority, service))
    await writer.drain()
    received = 0
    while received < MAX_BYTES:
        kind, flags, stream, payload = await _read_frame(reader)
        received += 9 + len(payload)
        if kind == SETTINGS and not flags & ACK:
            writer.write(frame(SETTINGS, ACK, 0))
            await writer.drain()
        elif kind == DATA and stream == 1 and len(payload) >= 5:
            body = payload[5:5 + int.from_bytes(payload[1:5], "big")]
            if body[:1] == b"\x08" and len(body) >= 2:
                return body[1]
            return 0  # UNKNOWN: field 1 absent
        elif kind in (RST_STREAM, GOAWAY) or (kind == HEADERS and stream == 1 and flags & END_STREAM):
            return None
    return None
