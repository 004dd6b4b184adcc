"""An offline agent that reports token usage and cost per reply, as a model agent does (for export atif)."""

from __future__ import annotations

from pytest_netarena.apps.malt.agents.expert import ExpertAgent
from pytest_netarena.core.types import Reply, Task, Usage

K8S_REPLIES = ("```\nkubectl get networkpolicy\n```", "I am not sure what to do next.", "```\nkubectl get pods\n```")


class PaidAgent:
    """MALT: the expert's answer; k8s: two reads around a reply with no action. Every reply costs tokens."""

    def reset(self, task: Task) -> None:
        self.app, self.turn = task.app, 0
        self.expert = ExpertAgent()
        self.expert.reset(task)

    def act(self, observation: str) -> Reply:
        self.turn += 1
        text = self.expert.act(observation).text if self.app == "malt" else K8S_REPLIES[(self.turn - 1) % 3]
        return Reply(text, Usage(tokens_in=100 * self.turn + 7, tokens_out=10 * self.turn, cost_usd=0.001 * self.turn))

    def close(self) -> None:
        pass
