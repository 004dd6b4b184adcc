"""Helpers of the K8s app tests: run an episode directly, scripted agents."""

from __future__ import annotations

from pytest_netarena.agents.prompting import build_system_prompt
from pytest_netarena.apps.k8s import APP
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import Query, Task


def episode(env, agent, query: Query, max_steps: int = 10, name: str = "agent"):
    task = Task("k8s", "e1", build_system_prompt(APP.prompt(), "zero-shot"),
                "zero-shot", max_steps)
    return run_episode(env, agent, query, task, EpisodeConfig(max_steps), name)


class Scripted:
    """An agent replying from a fixed list (then saying it is done)."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.seen: list[str] = []

    def reset(self, task):
        self.task = task

    def act(self, observation):
        self.seen.append(observation)
        return self.replies.pop(0) if self.replies else "done"

    def close(self):
        pass
