"""A python: agent that acts only through tool calls: it asks a built-in text agent what to do and sends that
action as the app's tool call, so its episodes can be held against the text agent's (same actions, same verdicts)."""

from __future__ import annotations

import json
from typing import Any

from pytest_netarena.core.tools import ToolCall
from pytest_netarena.core.types import Reply, Task


def as_call(app: str, text: str, number: int) -> ToolCall:
    """The action a built-in agent's reply holds, as that app's tool call."""
    if app == "k8s":
        from pytest_netarena.apps.k8s.replies import read_reply

        return ToolCall.of("run_kubectl", {"command": read_reply(text).command}, f"call-{number}")
    if app == "route":  # the route built-ins answer {"machine": ..., "command": ...}
        action = json.loads(text)
        return ToolCall.of("run_command", {"machine": action["machine"], "command": action["command"]},
                           f"call-{number}")
    from pytest_netarena.apps.malt.replies import read_program

    return ToolCall.of("run_process_graph", {"code": read_program(text).code}, f"call-{number}")


class ToolTwin:
    """Each turn: the inner text agent's action as one tool call (or `per_reply` calls of its next actions)."""

    uses_tools = True

    def __init__(self, app: str, inner: Any, per_reply: int = 1) -> None:
        self.app, self.inner, self.per_reply = app, inner, per_reply
        self.calls = 0
        self.observations: list[Any] = []

    def reset(self, task: Task) -> None:
        self.task = task
        self.inner.reset(task)

    def act(self, observation: str) -> Reply:
        self.observations.append(observation)
        calls = []
        for _ in range(self.per_reply):
            self.calls += 1
            reply = self.inner.act(str(observation))
            calls.append(as_call(self.app, reply.text if isinstance(reply, Reply) else str(reply), self.calls))
        return Reply("", tool_calls=tuple(calls))

    def close(self) -> None:
        self.inner.close()


class Calls:
    """Sends the given replies of tool calls, one list per turn, then finish."""

    uses_tools = True

    def __init__(self, *turns: list[ToolCall] | Reply) -> None:
        self.turns = list(turns)
        self.observations: list[Any] = []

    def reset(self, task: Task) -> None:
        self.task = task

    def act(self, observation: str) -> Reply:
        self.observations.append(observation)
        if not self.turns:
            return Reply("", tool_calls=(ToolCall("finish", "{}", "end"),))
        turn = self.turns.pop(0)
        return turn if isinstance(turn, Reply) else Reply("", tool_calls=tuple(turn))

    def close(self) -> None:
        pass
