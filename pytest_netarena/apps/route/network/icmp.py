"""The pingmesh's packets: ICMP echo messages with a checksum, the probe and answer payloads, and ICMP errors read back.

A probe's payload starts with PROBE_MAGIC and its nonce; an answer's with ANSWER_MAGIC, the nonce and the token of
that probe. Every probe is PROBE_BYTES on the wire (ICMP and UDP alike), so a link whose MTU is smaller fails.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: ICMP payload bytes; with the IP and ICMP headers a probe is 512 bytes on the wire
PAYLOAD = 484
PROBE_BYTES = PAYLOAD + 28
ECHO_REQUEST, ECHO_REPLY = 8, 0
DEST_UNREACHABLE, TIME_EXCEEDED = 3, 11
#: first payload bytes of a probe and of a responder's answer
PROBE_MAGIC, ANSWER_MAGIC = b"naQ1", b"naA1"
NONCE_BYTES, TOKEN_BYTES = 8, 16
#: magic and nonce (what a probe carries first), then the token (what an answer adds)
HEAD_BYTES = len(PROBE_MAGIC) + NONCE_BYTES
ANSWER_BYTES = HEAD_BYTES + TOKEN_BYTES
#: what a destination-unreachable code means
UNREACHABLE_CODES = {0: "network unreachable", 1: "host unreachable", 2: "protocol unreachable",
                     3: "port unreachable", 4: "fragmentation needed (MTU too small)", 9: "network prohibited",
                     10: "host prohibited", 13: "administratively prohibited"}

HEADER = struct.Struct("!BBHHH")


def fold(total: int) -> int:
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


@dataclass(frozen=True)
class Filler:
    """The fixed tail of a packet's payload and the sum of its 16-bit words (tails start at an even offset)."""

    data: bytes
    words: int

    @classmethod
    def of(cls, head: bytes, size: int) -> Filler:
        data = (head + bytes(range(256)) * (size // 256 + 1))[:size]
        return cls(data, sum(struct.unpack(f"!{size // 2}H", data)))


#: a probe's tail (after magic and nonce), and the size of an answer's tail (after magic, nonce and token)
PROBE_FILLER = Filler.of(b"", PAYLOAD - HEAD_BYTES)
ANSWER_TAIL = PAYLOAD - ANSWER_BYTES
_HEAD_WORDS = {size: struct.Struct(f"!{size // 2}H") for size in (HEAD_BYTES, ANSWER_BYTES)}


def echo(kind: int, ident: int, seq: int, head: bytes, tail: Filler) -> bytes:
    """An ICMP echo message: header, then head (even length), then the tail, with its checksum."""
    words = (kind << 8) + ident + seq + tail.words + sum(_HEAD_WORDS[len(head)].unpack(head))
    checksum = ~fold(words) & 0xFFFF
    return HEADER.pack(kind, 0, checksum, ident, seq) + head + tail.data


def quoted_probe(packet: bytes) -> tuple[bytes, str] | None:
    """An ICMP error (IP header first, as a raw socket reads it) about one of our echo probes: (its nonce, what the
    error says); None for anything else."""
    outer = (packet[0] & 0x0F) * 4
    if len(packet) < outer + 8 + 20:
        return None
    kind, code = packet[outer], packet[outer + 1]
    if kind not in (DEST_UNREACHABLE, TIME_EXCEEDED):
        return None
    inner = outer + 8
    if packet[inner + 9] != 1:  # the quoted packet is not ICMP
        return None
    quoted = inner + (packet[inner] & 0x0F) * 4
    if len(packet) < quoted + 8 + HEAD_BYTES or packet[quoted] != ECHO_REQUEST:
        return None
    payload = packet[quoted + 8:quoted + 8 + HEAD_BYTES]
    if payload[:len(PROBE_MAGIC)] != PROBE_MAGIC:
        return None
    why = "time exceeded (a routing loop)" if kind == TIME_EXCEEDED else UNREACHABLE_CODES.get(code, f"unreachable (code {code})")
    return payload[len(PROBE_MAGIC):], why
