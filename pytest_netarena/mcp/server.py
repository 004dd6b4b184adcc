"""One episode's MCP server: the session's tools, its task as instructions and a prompt, every call one judged step.

Built on the official MCP SDK's low-level server (imported lazily). The client sees exactly what any agent
is told: the tools (the app's actions and finish), the system prompt and the first symptom. No fault
parameter, query id, category or level reaches it: the server's name is the app's and tool results are
the session's observations. Calls are checked by the session, not by the SDK (`validate_input=False`),
so a malformed call is a refused step the report counts, as for every other interface. Calls run off the
event loop, one at a time in arrival order (the session serialises them), each judged as its own step.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ..core.tools import ToolCall, ToolResult

if TYPE_CHECKING:
    from ..core.session import EpisodeSession

#: the one prompt the server offers: the episode's task
PROMPT = "task"


def task_text(session: EpisodeSession) -> str:
    """The task as one text: the system prompt, then the first observation."""
    return f"{session.task.system_prompt.strip()}\n\nThe environment now shows:\n\n{session.first_observation}"


class Activity:
    """When the client last asked something, and whether a request is in flight (for idle deadlines)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last = time.monotonic()
        self.running = 0
        self.peak = 0  #: the most requests in flight at once
        self.calls = 0  #: tool calls received
        self.first_call_at: float | None = None  #: time.monotonic() of the first tool call
        self.client = ""  #: the client's name, from its initialize request

    def touch(self) -> None:
        with self._lock:
            self.last = time.monotonic()

    def idle_s(self) -> float:
        """Seconds since the client last asked anything, 0 while one of its calls runs."""
        with self._lock:
            return 0.0 if self.running else time.monotonic() - self.last

    def begin(self, call: bool = True) -> None:
        """A request starts: a tool call, or (call=False) anything else worth waiting for, e.g. a model request."""
        with self._lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
            self.last = time.monotonic()
            if call:
                self.calls += 1
                self.first_call_at = self.first_call_at or self.last

    def end(self) -> None:
        with self._lock:
            self.running -= 1
            self.last = time.monotonic()


def build_server(session: EpisodeSession, activity: Activity | None = None) -> Any:
    """The MCP server of an opened session (mcp.server.lowlevel.Server)."""
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    from .. import __version__

    activity = activity or Activity()
    server = Server(f"netarena-{session.task.app}", version=__version__, instructions=task_text(session))
    tools = [types.Tool(name=tool.name, description=tool.description, inputSchema=_plain(tool.parameters))
             for tool in session.tools]

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        note_client()
        activity.touch()
        return tools

    def note_client() -> None:
        if not activity.client:
            try:
                info = server.request_context.session.client_params.clientInfo  # type: ignore[union-attr]  # None: caught below
                activity.client = f"{info.name}"[:80]
            except (AttributeError, LookupError):
                pass

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        note_client()
        activity.begin()
        try:
            call = _call_of(name, arguments, _request_id(server))
            result: ToolResult = await anyio.to_thread.run_sync(session.call, call)
        finally:
            activity.end()
        return types.CallToolResult(content=[types.TextContent(type="text", text=result.content)],
                                    isError=result.is_error)

    @server.list_prompts()
    async def list_prompts() -> list[types.Prompt]:
        activity.touch()
        return [types.Prompt(name=PROMPT, description="The task of this episode: what to do and what the "
                                                      "environment shows now.", arguments=[])]

    @server.get_prompt()
    async def get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        activity.touch()
        if name != PROMPT:
            raise ValueError(f"unknown prompt; the prompts are: {PROMPT}")
        return types.GetPromptResult(description="The task of this episode.", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=task_text(session)))])

    return server


def _request_id(server: Any) -> str:
    try:
        return f"mcp-{server.request_context.request_id}"
    except (AttributeError, LookupError):
        return ""


def _call_of(name: Any, arguments: Any, call_id: str = "") -> ToolCall:
    """The session's ToolCall for what the client sent (arguments re-encoded as JSON text; never raises)."""
    import json

    try:
        text = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    except (TypeError, ValueError):
        text = "\ufffd not JSON"
    return ToolCall(name if isinstance(name, str) else str(name), text, call_id)


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
