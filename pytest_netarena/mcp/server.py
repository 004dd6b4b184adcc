"""One episode's MCP server: the session's tools, its task as instructions and a prompt, every call one judged step.

Built on the official MCP SDK's low-level server (2.x, imported lazily), which serves protocol revision 2026-07-28
(`server/discover`, the per-request envelope) and, to older clients, the `initialize` handshake of 2025-11-25 and
before. The client sees exactly what any agent is told: the tools (the app's actions and finish), the system prompt
and the first symptom. No fault parameter, query id, category or level reaches it: the server's name is the app's
and tool results are the session's observations. Calls are checked by the session, not by the SDK, so a malformed
call is a refused step the report counts, as for every other interface. Calls run off the event loop, one at a time
in arrival order (the session serialises them), each judged as its own step. Once the episode is over, its verdict
reaches the client: in the result of the call that ended it (finish, or the step after which the environment ended
it), in any later call's result, and as the resource VERDICT_URI.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core.tools import ToolCall, ToolResult

if TYPE_CHECKING:
    from ..core.session import EpisodeSession
    from ..core.types import EpisodeResult

#: the one prompt the server offers: the episode's task
PROMPT = "task"
#: the resources the server offers: the episode's task, and its verdict once it is over
TASK_URI = "netarena://episode/task"
VERDICT_URI = "netarena://episode/verdict"


def task_text(session: EpisodeSession) -> str:
    """The task as one text: the system prompt, then the first observation."""
    return f"{session.task.system_prompt.strip()}\n\nThe environment now shows:\n\n{session.first_observation}"


def verdict_of(result: EpisodeResult) -> dict[str, Any]:
    """What the client may learn of a judged episode: its outcome and how it ended (never the query or details,
    which name the hidden fault)."""
    return {"episode_id": result.episode_id, "outcome": result.outcome.value, "resolved": result.outcome.value == "resolved",
            "correct": result.correct, "safe": result.safe, "steps": len(result.steps), "ended_by": result.ended_by,
            **({"overly_permissive": bool(result.metrics["overly_permissive"])}
               if "overly_permissive" in result.metrics else {})}


def verdict_text(result: EpisodeResult) -> str:
    """The verdict as one line a person (or a model) reads."""
    verdict = verdict_of(result)
    steps = verdict["steps"]
    return (f"Verdict: {verdict['outcome']} (correct: {'yes' if verdict['correct'] else 'no'}, every step safe: "
            f"{'yes' if verdict['safe'] else 'no'}) after {steps} step{'' if steps == 1 else 's'}.")


class Activity:
    """When the client last asked something, and whether a request is in flight (for idle deadlines)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.last = time.monotonic()
        self.running = 0
        self.peak = 0  #: the most requests in flight at once
        self.calls = 0  #: tool calls received
        self.first_call_at: float | None = None  #: time.monotonic() of the first tool call
        self.client = ""  #: the client's name, from its initialize request (or its 2026-07-28 request metadata)

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


def build_server(session: EpisodeSession, activity: Activity | None = None,
                 judged: Callable[[], EpisodeResult] | None = None) -> Any:
    """The MCP server of an opened session (mcp.server.lowlevel.Server).

    judged(): the episode's result, judged once, called when the episode is over (default: session.result())."""
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    from .. import __version__

    activity = activity or Activity()
    judge = judged or session.result
    tools = [types.Tool(name=tool.name, description=tool.description, input_schema=_plain(tool.parameters))
             for tool in session.tools]

    def note_client(ctx: Any) -> None:
        activity.touch()
        if not activity.client:
            activity.client = _client_name(ctx)[:80]

    def verdict() -> EpisodeResult | None:
        return judge() if session.over else None

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        note_client(ctx)
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        note_client(ctx)
        activity.begin()
        try:
            call = _call_of(params.name, params.arguments, f"mcp-{ctx.request_id}" if ctx.request_id else "")
            result: ToolResult = await anyio.to_thread.run_sync(session.call, call)
            judged_result = await anyio.to_thread.run_sync(verdict)
        finally:
            activity.end()
        content: list[types.ContentBlock] = [types.TextContent(type="text", text=result.content)]
        if judged_result is not None:
            content.append(types.TextContent(type="text", text=verdict_text(judged_result)))
        return types.CallToolResult(content=content, is_error=result.is_error,
                                    structured_content={"verdict": verdict_of(judged_result)} if judged_result else None)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        note_client(ctx)
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT, description="The task of this episode: what to do and what the environment shows now.",
            arguments=[])])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        note_client(ctx)
        if params.name != PROMPT:
            raise ValueError(f"unknown prompt; the prompts are: {PROMPT}")
        return types.GetPromptResult(description="The task of this episode.", messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=task_text(session)))])

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        note_client(ctx)
        return types.ListResourcesResult(resources=[
            types.Resource(uri=TASK_URI, name="task", mime_type="text/plain",
                           description="The task of this episode (as the prompt `task`)."),
            types.Resource(uri=VERDICT_URI, name="verdict", mime_type="application/json",
                           description="The episode's verdict once it is over: outcome, correct, safe, steps, how "
                                       "it ended; until then, that it is still running.")])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        note_client(ctx)
        uri = str(params.uri)
        if uri == TASK_URI:
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/plain",
                                                                                 text=task_text(session))])
        if uri != VERDICT_URI:
            raise ValueError(f"unknown resource; the resources are: {TASK_URI}, {VERDICT_URI}")
        judged_result = await anyio.to_thread.run_sync(verdict)
        body = {"over": False, "note": "the episode is still running: call finish to end it"} \
            if judged_result is None else {"over": True, **verdict_of(judged_result)}
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=uri, mime_type="application/json", text=json.dumps(body, sort_keys=True))])

    return Server(f"netarena-{session.task.app}", version=__version__, instructions=task_text(session),
                  on_list_tools=list_tools, on_call_tool=call_tool, on_list_prompts=list_prompts,
                  on_get_prompt=get_prompt, on_list_resources=list_resources, on_read_resource=read_resource)


def _client_name(ctx: Any) -> str:
    """The client's name: from its initialize request (up to 2025-11-25) or its request metadata (2026-07-28)."""
    try:
        params = ctx.session.client_params
        if params is not None:
            return str(params.client_info.name)
    except (AttributeError, LookupError):
        pass
    meta = getattr(ctx, "meta", None)
    info = getattr(meta, "io_modelcontextprotocol_client_info", None) if meta is not None else None
    if info is None and isinstance(getattr(ctx, "params", None), dict):
        info = (ctx.params.get("_meta") or {}).get("io.modelcontextprotocol/clientInfo")
    name = getattr(info, "name", None) or (info.get("name") if isinstance(info, dict) else None)
    return str(name or "")


def _call_of(name: Any, arguments: Any, call_id: str = "") -> ToolCall:
    """The session's ToolCall for what the client sent (arguments re-encoded as JSON text; never raises)."""
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
