"""The no-op agent (a floor for comparisons); the Agent protocol lives in core.agent and is re-exported here."""

from __future__ import annotations

from ..core.agent import Agent
from ..core.types import Reply, Task

__all__ = ["Agent", "NoopAgent"]


class NoopAgent:
    """Answers every observation with nothing; resolves no query (a floor for comparisons)."""

    def reset(self, task: Task) -> None:
        self.task = task

    def act(self, observation: str) -> Reply:
        return Reply("I will not change anything.")

    def close(self) -> None:
        pass
