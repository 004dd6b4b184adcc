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
    """

    def reset(self, task: Task) -> None: ...

    def act(self, observation: str) -> Reply | str: ...

    def close(self) -> None: ...
