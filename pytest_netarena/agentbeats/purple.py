"""A purple (evaluated) A2A agent around a Python function from prompt text to reply, for tests and demos."""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable
from typing import Any

from .server import RunningServer, Skill, make_asgi_app, make_card

#: how the reply goes back: one agent Message, or a Task completed with the reply as its artifact
STYLES = ("message", "task")


def reply_parts(answer: Any) -> list[Any]:
    """A str becomes one text part, a dict or list one data part, a list of Parts stays as it is."""
    from a2a.helpers import new_data_part, new_text_part
    from a2a.types.a2a_pb2 import Part

    if isinstance(answer, str):
        return [new_text_part(answer)]
    if isinstance(answer, list) and all(isinstance(part, Part) for part in answer):
        return answer
    return [new_data_part(json.loads(json.dumps(answer)))]


def _content(answer: Any) -> Any:
    """An agent's Reply is sent as its text; anything else as it is."""
    from ..core.types import Reply

    return answer.text if isinstance(answer, Reply) else answer


def _usage_metadata(answer: Any) -> dict[str, Any] | None:
    """A Reply's usage in the metadata names green agents read (OpenAI's)."""
    from ..core.types import Reply

    if not isinstance(answer, Reply):
        return None
    usage = answer.usage
    return {"usage": {"prompt_tokens": usage.tokens_in, "completion_tokens": usage.tokens_out,
                      "cost_usd": usage.cost_usd}}


class ReplierExecutor:
    """An a2a-sdk AgentExecutor answering each message with respond(text) (sync, run in a thread, or async)."""

    def __init__(self, respond: Callable[[str], Any], style: str = "message", heartbeat_s: float | None = None,
                 usage: dict[str, Any] | None = None) -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, not {style!r}")
        if heartbeat_s is not None and style != "task":
            raise ValueError("heartbeats are 'working' task updates: use style='task'")
        self.respond = respond
        self.style = style
        self.heartbeat_s = heartbeat_s  #: stream a "working" update this often while respond runs
        self.usage = usage  #: reported as the reply's metadata {"usage": ...}, as LLM-backed agents do
        self.prompts: list[str] = []  #: every prompt received, for tests

    async def execute(self, context: Any, event_queue: Any) -> None:
        from a2a.helpers import new_message, new_task_from_user_message, new_text_part
        from a2a.server.tasks import TaskUpdater

        text = context.get_user_input()
        self.prompts.append(text)
        metadata = {"usage": self.usage} if self.usage is not None else None
        if self.style == "message":
            answer = await self._answer(text)
            metadata = _usage_metadata(answer) or metadata
            message = new_message(reply_parts(_content(answer)), context_id=context.context_id)
            if metadata:
                message.metadata.update(metadata)
            await event_queue.enqueue_event(message)
            return
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        answering = asyncio.ensure_future(self._answer(text))
        while self.heartbeat_s is not None and not answering.done():
            await asyncio.wait([answering], timeout=self.heartbeat_s)
            if not answering.done():
                await updater.start_work(updater.new_agent_message([new_text_part("working")]))
        answer = await answering
        metadata = _usage_metadata(answer) or metadata
        await updater.add_artifact(reply_parts(_content(answer)), name="reply", last_chunk=True, metadata=metadata)
        await updater.complete()

    async def _answer(self, text: str) -> Any:
        if inspect.iscoroutinefunction(self.respond):
            return await self.respond(text)
        return await asyncio.to_thread(self.respond, text)

    async def cancel(self, context: Any, event_queue: Any) -> None:
        from a2a.utils.errors import UnsupportedOperationError

        raise UnsupportedOperationError()


def purple_app(respond: Callable[[str], Any], *, style: str = "message", streaming: bool = True,
               name: str = "netarena test purple agent", protocol_versions: tuple[str, ...] = ("1.0", "0.3"),
               heartbeat_s: float | None = None, usage: dict[str, Any] | None = None,
               description: str | None = None) -> Callable[[str], Any]:
    """A function url -> ASGI app of a purple agent answering with respond (the shape servers take)."""
    executor = ReplierExecutor(respond, style, heartbeat_s, usage)

    def build(url: str) -> Any:
        card = make_card(name, description or "Answers each prompt with a fixed Python function.", url,
                         [Skill("reply", "reply", "answers one prompt", ("test",))], streaming=streaming,
                         protocol_versions=protocol_versions)
        app = make_asgi_app(card, executor)
        app.state.executor = executor
        return app

    return build


def purple_server(respond: Callable[[str], Any], *, host: str = "127.0.0.1", port: int = 0,
                  **settings: Any) -> RunningServer:
    """A started-on-enter server for respond; `server.app.state.executor` holds the ReplierExecutor."""
    return RunningServer(purple_app(respond, **settings), host, port)
