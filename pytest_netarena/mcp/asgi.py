"""Routing the requests of an MCP listener: `Routes` sends each to the app whose path prefix it starts with.

`netarena mcp --http` serves the episode's MCP server at /mcp; a CLI box's one listener serves it
beside the model relay (`relay.py`) at /model. Both run on `serving.Listener`; the lifespan reaches
every app that holds state for its life (the MCP SDK's session manager holds a task group).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..serving import plain


class Routes:
    """An ASGI app sending each request to the app of the longest path prefix it starts with (404 otherwise);
    lifespan events reach every app that wants them."""

    def __init__(self, routes: Mapping[str, Any], lifespans: tuple[Callable[[], Any], ...] = ()) -> None:
        self.routes = sorted(routes.items(), key=lambda item: -len(item[0]))
        self.lifespans = lifespans  #: async context managers to hold open while the server runs

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "")
        for prefix, app in self.routes:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                await app(scope, receive, send)
                return
        await plain(send, 404, "not found\n")

    async def _lifespan(self, receive: Callable[[], Any], send: Callable[[Any], Any]) -> None:
        from contextlib import AsyncExitStack

        async with AsyncExitStack() as stack:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    for make in self.lifespans:
                        await stack.enter_async_context(make())
                except Exception as error:  # noqa: BLE001 - reported to uvicorn, which stops
                    await send({"type": "lifespan.startup.failed", "message": str(error)})
                    return
                await send({"type": "lifespan.startup.complete"})
                message = await receive()
            if message["type"] == "lifespan.shutdown":
                await stack.aclose()
                await send({"type": "lifespan.shutdown.complete"})
