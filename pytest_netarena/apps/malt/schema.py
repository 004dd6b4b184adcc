"""The MALT schema: entity and relationship kinds, the containment rule table, attribute names."""

from __future__ import annotations

JUPITER = "EK_JUPITER"
SUPERBLOCK = "EK_SUPERBLOCK"
SPINEBLOCK = "EK_SPINEBLOCK"
AGG_BLOCK = "EK_AGG_BLOCK"
CHASSIS = "EK_CHASSIS"
CONTROL_DOMAIN = "EK_CONTROL_DOMAIN"
CONTROL_POINT = "EK_CONTROL_POINT"
PACKET_SWITCH = "EK_PACKET_SWITCH"
PORT = "EK_PORT"
RACK = "EK_RACK"

ENTITY_KINDS = (
    JUPITER, SUPERBLOCK, SPINEBLOCK, AGG_BLOCK, CHASSIS,
    CONTROL_DOMAIN, CONTROL_POINT, PACKET_SWITCH, PORT, RACK,
)

CONTAINS = "RK_CONTAINS"
CONTROLS = "RK_CONTROLS"
RELATIONSHIP_KINDS = (CONTAINS, CONTROLS)

CAPACITY = "physical_capacity_bps"

#: which kinds may RK_CONTAIN which (NetArena's rule table, research notes section 5.7)
MAY_CONTAIN: dict[str, frozenset[str]] = {
    JUPITER: frozenset({SPINEBLOCK, SUPERBLOCK}),
    SPINEBLOCK: frozenset({PACKET_SWITCH}),
    SUPERBLOCK: frozenset({AGG_BLOCK}),
    AGG_BLOCK: frozenset({PACKET_SWITCH}),
    CHASSIS: frozenset({CONTROL_POINT, PACKET_SWITCH}),
    CONTROL_POINT: frozenset({PACKET_SWITCH}),
    RACK: frozenset({CHASSIS}),
    PACKET_SWITCH: frozenset({PORT}),
    CONTROL_DOMAIN: frozenset({CONTROL_POINT, PACKET_SWITCH}),
}

#: which kinds may RK_CONTROL which
MAY_CONTROL: dict[str, frozenset[str]] = {CONTROL_POINT: frozenset({PACKET_SWITCH})}

#: short human words for kinds, used in question texts
KIND_WORDS = {
    JUPITER: "datacenter (jupiter)",
    SUPERBLOCK: "superblock",
    SPINEBLOCK: "spine block",
    AGG_BLOCK: "aggregation block",
    CHASSIS: "chassis",
    CONTROL_DOMAIN: "control domain",
    CONTROL_POINT: "control point",
    PACKET_SWITCH: "packet switch",
    PORT: "port",
    RACK: "rack",
}
