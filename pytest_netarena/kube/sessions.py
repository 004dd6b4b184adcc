"""Serving an exec session (a WebSocket) or a container log (a body, or chunks while following) on one HTTP connection."""

from __future__ import annotations

import traceback

from . import errors, handlers, podio
from .websocket import ChannelSocket, Closed, handshake


def serve_exec(handler, app, request: podio.ExecRequest) -> None:
    """Upgrade the handler's connection to a WebSocket and let the runtime run the command; its Status ends it."""
    if not request.protocol:
        handler._respond(handlers.Response(400, errors.bad_request(
            "none of the offered WebSocket subprotocols is served (this server speaks "
            "v5.channel.k8s.io and v4.channel.k8s.io)").status()))
        return
    handler.wfile.write(handshake(request.websocket_key, request.protocol))
    handler.wfile.flush()
    handler.connection.settimeout(None)  # the session bounds its own time (the runtime's exec limits)
    channel = ChannelSocket(handler.rfile, handler.wfile, request.protocol, handler.connection.fileno())
    try:
        status = app.runtime.exec(request, channel)
    except errors.ApiError as error:
        status = error.status()
    except Closed:
        return
    except Exception as error:  # a runtime bug ends the session with a Status, never a dropped connection
        app.last_error = traceback.format_exc()
        status = errors.internal(f"{type(error).__name__}: {error}").status()
    try:
        channel.send_status(status)
    except (Closed, OSError):
        pass
    channel.close()


def serve_logs(handler, app, request: podio.LogRequest) -> None:
    """The log as one text body, or (follow) as chunks while the runtime yields them."""
    chunks = iter(())
    try:
        chunks = app.runtime.logs(request)
        if not request.follow:
            handler._respond(handlers.Response(200, b"".join(chunks), "text/plain"))
            return
        first = next(chunks, b"")
    except errors.ApiError as error:
        handler._respond(handlers.Response(error.code, error.status()))
        return
    handler.send_response(200)
    handler.send_header("Content-Type", "text/plain")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    handler.close_connection = True
    try:
        _chunk(handler, first)
        for data in chunks:  # an empty piece is a follower's idle wake-up: a closed listener ends the stream there
            if getattr(handler.server, "closing", False):
                return
            _chunk(handler, data)
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()


def _chunk(handler, data: bytes) -> None:
    if data:
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        handler.wfile.flush()
