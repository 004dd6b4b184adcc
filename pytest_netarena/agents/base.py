"""The Agent protocol every agent implements, built-in, model-backed or the user's own."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..core.types import Reply, Task


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


class NoopAgent:
    """Answers every observation with nothing; resolves no query (a floor for comparisons)."""

    def reset(self, task: Task) -> None:
        self.task = task

    def act(self, observation: str) -> Reply:
        return Reply("I will not change anything.")

    def close(self) -> None:
        pass
