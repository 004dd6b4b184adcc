"""NetworkPolicyPort entries: validation, defaulting (protocol TCP) and matching a resolved port."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .objects import PROTOCOLS

_IANA_SVC_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def port_name_problem(name: str) -> str | None:
    """Why `name` is not an IANA service name (what Kubernetes requires of named ports), or None."""
    if len(name) > 15:
        return f"port name {name!r} must be no more than 15 characters"
    if not _IANA_SVC_NAME.match(name) or "--" in name:
        return f"port name {name!r} must be lowercase alphanumerics and single '-', not starting or ending with '-'"
    if not re.search(r"[a-z]", name):
        return f"port name {name!r} must contain at least one letter (use a number, not a string, for a numeric port)"
    return None


@dataclass(frozen=True)
class PortRule:
    """One `ports` entry. port None: every port of the protocol; str: a named port."""

    protocol: str = "TCP"
    port: int | str | None = None
    end_port: int | None = None

    def matches(self, number: int, protocol: str, names: frozenset[str]) -> bool:
        """Does the entry admit `number/protocol` at a destination whose port names for it are `names`?"""
        if protocol != self.protocol:
            return False
        if self.port is None:
            return True
        if isinstance(self.port, str):
            return self.port in names
        if self.end_port is None:
            return number == self.port
        return self.port <= number <= self.end_port

    def __str__(self) -> str:
        if self.port is None:
            return f"all/{self.protocol}"
        if self.end_port is not None:
            return f"{self.port}-{self.end_port}/{self.protocol}"
        return f"{self.port}/{self.protocol}"


def _valid_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535


def compile_port(raw: Any, path: str, fail: Callable[[str, str], Exception]) -> PortRule:
    if not isinstance(raw, dict):
        raise fail(path, "must be an object with protocol, port and endPort")
    unknown = set(raw) - {"protocol", "port", "endPort"}
    if unknown:
        raise fail(path, f"unknown field(s) {sorted(unknown)}")
    protocol = raw.get("protocol")
    if protocol is None:
        protocol = "TCP"
    if protocol not in PROTOCOLS:
        raise fail(f"{path}.protocol", f"unsupported protocol {protocol!r} (expected TCP, UDP or SCTP)")
    port, end_port = raw.get("port"), raw.get("endPort")
    if isinstance(port, str):
        problem = port_name_problem(port)
        if problem:
            raise fail(f"{path}.port", problem)
    elif port is not None and not _valid_number(port):
        raise fail(f"{path}.port", f"{port!r} must be a port number between 1 and 65535 or a port name")
    if end_port is not None:
        if not isinstance(port, int) or isinstance(port, bool):
            raise fail(f"{path}.endPort", "may only be set together with a numeric port")
        if not _valid_number(end_port):
            raise fail(f"{path}.endPort", f"{end_port!r} must be a port number between 1 and 65535")
        if end_port < port:
            raise fail(f"{path}.endPort", f"{end_port} must be greater than or equal to port {port}")
    return PortRule(protocol, port, end_port)
