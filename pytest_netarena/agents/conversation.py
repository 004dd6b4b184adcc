"""A model agent's chat history: observations as user or tool messages, replies with their tool calls, trimmed whole.

Trimming drops whole turns from the front and never splits an assistant message that made tool calls
from the tool messages answering them (a provider refuses a tool message without its call).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.tools import ToolCall
from ..core.types import Reply

#: what the history keeps for a reply with no text and no tool call (some providers reject empty turns)
EMPTY_REPLY_PLACEHOLDER = "(empty reply)"

Message = dict[str, Any]


class Conversation:
    """System prompt, first observation, then the most recent turns within `max_chars` characters."""

    def __init__(self, system_prompt: str, max_chars: int) -> None:
        self.max_chars = max_chars
        self.history: list[Message] = [{"role": "system", "content": system_prompt}]
        self.dropped = 0  #: messages removed from the middle so far
        self._calls: tuple[ToolCall, ...] = ()  #: the last reply's tool calls, to be answered by tool messages

    def pending(self, observation: str) -> tuple[list[Message], int]:
        """The history with this observation added and trimmed, and the count of messages dropped then
        (nothing is committed: `commit` does that once the model answered)."""
        return self._trim([*self.history, *self.observation_messages(observation)])

    def observation_messages(self, observation: str) -> list[Message]:
        """An observation as messages: one `tool` message per call of the last reply (its result, matched by
        call id), else a user message."""
        if not self._calls:
            return [{"role": "user", "content": str(observation)}]
        results = {result.call_id: result.content for result in getattr(observation, "tool_results", ())}
        return [{"role": "tool", "tool_call_id": call.call_id, "content": results.get(call.call_id, str(observation))}
                for call in self._calls]

    def commit(self, history: list[Message], dropped: int, reply: Reply) -> None:
        """Keep the pending history and the model's reply (with its tool calls) as the new history."""
        message: Message = {"role": "assistant", "content": reply.text or (None if reply.tool_calls
                                                                            else EMPTY_REPLY_PLACEHOLDER)}
        if reply.tool_calls:
            message["tool_calls"] = [{"id": call.call_id, "type": "function",
                                      "function": {"name": call.name, "arguments": call.arguments}}
                                     for call in reply.tool_calls]
        self.history = [*history, message]
        self.dropped = dropped
        self._calls = reply.tool_calls

    def sendable(self, history: list[Message] | None = None, dropped: int | None = None) -> list[Message]:
        """The history as sent: a marker after the first observation says how much was dropped."""
        history = self.history if history is None else history
        dropped = self.dropped if dropped is None else dropped
        if not dropped:
            return list(history)
        return [*history[:2], {"role": "user", "content": marker_text(dropped)}, *history[2:]]

    def _trim(self, messages: list[Message]) -> tuple[list[Message], int]:
        """Keep system + first observation + the most recent turns within max_chars.

        Whole turns go from the front, so the kept tail starts with an observation or a reply that follows
        tool results, never with a tool message; the latest turn is always kept, even alone over the limit.
        Counts the marker's length."""
        head, tail = messages[:2], messages[2:]
        dropped = self.dropped
        while len(tail) > 1:
            marker = len(marker_text(dropped)) if dropped else 0
            if chars(head) + marker + chars(tail) <= self.max_chars:
                break
            cut = next((index for index in range(1, len(tail)) if _starts_turn(tail, index)), None)
            if cut is None:
                break
            dropped += cut
            tail = tail[cut:]
        return [*head, *tail], dropped


def _starts_turn(messages: list[Message], index: int) -> bool:
    """A kept history may start here: an observation, or a reply after the tool results of the one before."""
    role = messages[index]["role"]
    return role == "user" or (role == "assistant" and messages[index - 1]["role"] == "tool")


def marker_text(dropped: int) -> str:
    return f"[{dropped} earlier messages were removed to keep the conversation short; the latest follow.]"


def chars(messages: list[Message]) -> int:
    return sum(len(message.get("content") or "") + (len(json.dumps(message["tool_calls"]))
                                                     if message.get("tool_calls") else 0) for message in messages)
