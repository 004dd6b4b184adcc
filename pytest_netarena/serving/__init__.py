"""One hardened HTTP listener for every server we run: A2A green and purple, MCP over HTTP, a CLI box's MCP and relay."""

from __future__ import annotations

from .bodies import MAX_BODY_BYTES, BodyCap, plain, request_problem
from .guard import ConnectionLimits
from .listener import HttpOnly, Listener, listening_socket, url_of

__all__ = ["MAX_BODY_BYTES", "BodyCap", "ConnectionLimits", "HttpOnly", "Listener", "listening_socket", "plain",
           "request_problem", "url_of"]
