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


class ReplierExecutor:
    """An a2a-sdk AgentExecutor answering each message with respond(text) (sync, run in a thread, or async)."""

    def __init__(self, respond: Callable[[str], Any], style: str = "message") -> None:
        if style not in STYLES:
            raise ValueError(f"style must be one of {STYLES}, not {style!r}")
        self.respond = respond
        self.style = style
        self.prompts: list[str] = []  #: every prompt received, for tests

    async def execute(self, context: Any, event_queue: Any) -> None:
        from a2a.helpers import new_message, new_task_from_user_message
        from a2a.server.tasks import TaskUpdater

        text = context.get_user_input()
        self.prompts.append(text)
        if inspect.iscoroutinefunction(self.respond):
            answer = await self.respond(text)
        else:
            answer = await asyncio.to_thread(self.respond, text)
        parts = reply_parts(answer)
        if self.style == "message":
            await event_queue.enqueue_event(new_message(parts, context_id=context.context_id))
            return
        task = context.current_task or new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        await updater.add_artifact(parts, name="reply", last_chunk=True)
        await updater.complete()

    async def cancel(self, context: Any, event_queue: Any) -> None:
        from a2a.utils.errors import UnsupportedOperationError

        raise UnsupportedOperationError()


def purple_server(respond: Callable[[str], Any], *, style: str = "message", streaming: bool = True,
                  name: str = "netarena test purple agent", host: str = "127.0.0.1", port: int = 0,
                  protocol_versions: tuple[str, ...] = ("1.0", "0.3")) -> RunningServer:
    """A started-on-enter server for respond; `server.app.state.executor` holds the ReplierExecutor."""
    executor = ReplierExecutor(respond, style)

    def build(url: str) -> Any:
        card = make_card(name, "Answers each prompt with a fixed Python function.", url,
                         [Skill("reply", "reply", "answers one prompt", ("test",))], streaming=streaming,
                         protocol_versions=protocol_versions)
        app = make_asgi_app(card, executor)
        app.state.executor = executor
        return app

    return RunningServer(build, host, port)
