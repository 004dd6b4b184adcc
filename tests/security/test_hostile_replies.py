"""Agent text is data: NUL bytes, unpaired surrogates and huge replies are refused steps, never infra errors."""

from __future__ import annotations

import pytest

from pytest_netarena.core.app import Environment
from pytest_netarena.core.episode import MAX_REPLY_CHARS, EpisodeConfig, run_episode
from pytest_netarena.core.types import Judgement, Outcome, Query, StepOutcome, Task


class Recorder(Environment):
    """An environment that records what reached step() (nothing hostile may)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def reset(self, query: Query) -> str:
        return "symptom"

    def step(self, reply: str) -> StepOutcome:
        self.seen.append(reply)
        return StepOutcome(reply, "ran", "ran")

    def judge(self) -> Judgement:
        return Judgement(False, "not fixed")


class Scripted:
    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)

    def reset(self, task: Task) -> None:
        pass

    def act(self, observation: str) -> str:
        return self.replies.pop(0)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("hostile, why", [
    ("kubectl get pods\0--kubeconfig=/etc/shadow", "NUL"),
    ("kubectl get pods \udc80\udcff", "Unicode"),
    ("kubectl label pod a x=" + "y" * (MAX_REPLY_CHARS + 1), "limit"),
], ids=["nul", "surrogates", "huge"])
def test_a_hostile_reply_is_a_refused_step_not_an_infra_error(hostile: str, why: str) -> None:
    env = Recorder()
    query = Query("toy", 1, "x", 0, 0, {})
    task = Task("toy", "e1", "system", "zero-shot", 2)
    result = run_episode(env, Scripted([hostile, "fine"]), query, task, EpisodeConfig(max_steps=2), "scripted")
    assert result.outcome is Outcome.UNRESOLVED
    first = result.steps[0]
    assert first.refused and why in first.output
    assert env.seen == ["fine"]  # the hostile reply never reached the environment
    assert "\0" not in first.reply and len(first.reply) < 3000
    first.reply.encode("utf-8")  # the transcript can be written
