"""rtnetlink's wire format as the client and the route app's monitors read it: datagrams of several messages,
attributes with padding, and what stops a reading that a short length would send astray."""

from __future__ import annotations

import struct

from pytest_netarena.netlink.messages import (
    AF_BRIDGE, HEADER, IFLA_IFNAME, NDMSG, NUD_PERMANENT, attribute, attributes, messages, name, packets,
    static_neighbour, text, u32,
)


def message(kind: int, sequence: int, payload: bytes) -> bytes:
    data = HEADER.pack(HEADER.size + len(payload), kind, 0, sequence, 0) + payload
    return data + b"\0" * (-len(data) % 4)


def test_a_datagram_of_several_messages_is_read_message_by_message_across_padding() -> None:
    data = message(16, 1, b"abcde") + message(3, 1, b"") + message(24, 2, b"x" * 8)
    assert list(messages(data)) == [(16, 1, b"abcde"), (3, 1, b""), (24, 2, b"x" * 8)]


def test_a_length_shorter_than_a_header_ends_the_reading_instead_of_looping() -> None:
    broken = HEADER.pack(4, 16, 0, 1, 0)
    assert list(messages(message(16, 1, b"ok") + broken + message(16, 2, b"lost"))) == [(16, 1, b"ok")]


def test_attributes_are_padded_to_four_bytes_and_read_back_with_their_flags_cleared() -> None:
    packed = name(IFLA_IFNAME, "eth0") + u32(27, 7) + attribute(18 | 0x8000, attribute(1, b"veth"))
    assert len(packed) % 4 == 0 and len(name(IFLA_IFNAME, "eth0")) == 12  # 4 + "eth0\0" padded to 12
    read = list(attributes(packed, 0))
    assert [kind for kind, _ in read] == [IFLA_IFNAME, 27, 18]
    assert text(read[0][1]) == "eth0" and struct.unpack("=I", read[1][1])[0] == 7
    assert [(kind, text(value)) for kind, value in attributes(read[2][1], 0)] == [(1, "veth")]
    assert list(attributes(struct.pack("=HH", 2, 3) + b"rest", 0)) == []  # a length under the header's stops


def test_packets_are_the_sent_count_of_a_links_64_bit_counters() -> None:
    assert packets(struct.pack("=QQQQ", 5, 11, 100, 200)) == 11


def test_only_neighbours_set_by_hand_or_a_bridges_entries_are_static() -> None:
    learnt = NDMSG.pack(2, 0, 0, 3, 0x02, 0, 0)  # NUD_REACHABLE
    permanent = NDMSG.pack(2, 0, 0, 3, NUD_PERMANENT, 0, 0)
    bridge = NDMSG.pack(AF_BRIDGE, 0, 0, 3, 0x02, 0, 0)
    assert [static_neighbour(payload) for payload in (learnt, permanent, bridge, b"\0" * 3)] == [
        False, True, True, False]
