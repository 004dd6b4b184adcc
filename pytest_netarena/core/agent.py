"""The Agent protocol the episode loop drives: every agent, built-in, model-backed or the user's own, fulfils it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .types import Reply, Task


@runtime_checkable
class Agent(Protocol):
    """An agent under test.

    One instance serves one episode: `reset(task)` once, then `act(observation)` once per turn.
    `act` returns the reply text (or a Reply carrying token usage). `close()` frees resources.
    Example (`--agent=python:my_agents:make`):

        class EchoAgent:
            def reset(self, task): self.system = task.system_prompt
            def act(self, observation): return "kubectl get networkpolicy"
            def close(self): pass

        def make():
            return EchoAgent()

    Tools (docs/agents.md): when `task.tools` is not empty, the agent may answer with
    `Reply(text, tool_calls=(ToolCall(name, json_arguments, call_id), ...))`; each call is one step, and the
    next observation is a str whose `tool_results` hold one ToolResult per call. Optional attributes:
    `uses_tools = True` asks for tools under `--tool-calls auto`; `drive(session)` instead of an act() loop
    plays the whole episode through a core.session.EpisodeSession (MCP and CLI agents); `interface` names
    what the report records ("text", "tools", "mcp", "cli").
    """

    def reset(self, task: Task) -> None: ...

    def act(self, observation: str) -> Reply | str: ...

    def close(self) -> None: ...
