"""Agent replies read into one action: the node and the command line it runs there (in a sealed box)."""

from __future__ import annotations

import json
from dataclasses import dataclass

@dataclass(frozen=True)
class Action:
    """A parsed reply: the node and the command text."""

    machine: str
    command: str

    @property
    def text(self) -> str:
        return f"{self.machine}: {self.command}"


class Refusal(Exception):
    """A reply or command that is not executed; its message is shown to the agent."""


def parse_reply(reply: str) -> Action:
    """The single {"machine": ..., "command": ...} object in reply (prose and code fences tolerated)."""
    decoder = json.JSONDecoder()
    found: list[dict] = []
    position = reply.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(reply, position)
        except json.JSONDecodeError:
            position = reply.find("{", position + 1)
            continue
        if isinstance(value, dict) and "machine" in value and "command" in value:
            found.append(value)
        position = reply.find("{", end)
    distinct = {json.dumps(value, sort_keys=True) for value in found}
    if not found:
        raise Refusal(
            'no action found: reply with one JSON object {"machine": "<node name>", "command": "<one command>"}'
        )
    if len(distinct) > 1:
        raise Refusal(f"{len(distinct)} actions found: give exactly one JSON object per reply (one command at a time)")
    value = found[0]
    machine, command = value["machine"], value["command"]
    if not isinstance(machine, str) or not isinstance(command, str) or not machine.strip() or not command.strip():
        raise Refusal('"machine" and "command" must be non-empty strings')
    return Action(machine.strip(), command.strip())
