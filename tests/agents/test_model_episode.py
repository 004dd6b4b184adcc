"""run_episode with the ModelAgent against the stub server and a tiny environment."""

from __future__ import annotations

from pytest_netarena.core.app import Environment
from pytest_netarena.core.episode import EpisodeConfig, run_episode
from pytest_netarena.core.types import Judgement, Outcome, Query, StepOutcome, Task
from pytest_netarena.testing.openai_server import StubReply

QUERY = Query("tiny", 1, "fix", 0, 0, {"broken": "link-a"})
TASK = Task("tiny", "e1", "Repair the link. Reply `up LINK` or `show`.", "zero-shot", 4)


class TinyEnvironment(Environment):
    """One broken link; `up LINK` fixes it, `show` lists links, anything else is refused."""

    def reset(self, query: Query) -> str:
        self.broken = {query.params["broken"]}
        return "link-a is down"

    def step(self, reply: str) -> StepOutcome:
        words = reply.split()
        if words == ["show"]:
            return StepOutcome("show", "link-a down", "link-a down")
        if len(words) == 2 and words[0] == "up":
            self.broken.discard(words[1])
            return StepOutcome(reply, "ok", "all links up" if not self.broken else "still down", done=not self.broken)
        return StepOutcome("", "unparseable", "no action recognised", refused=True)

    def judge(self) -> Judgement:
        return Judgement(not self.broken, f"broken: {sorted(self.broken)}")


def test_a_normal_run_resolves_and_records_usage(serve, agent_for):
    server = serve([
        StubReply(content="show", prompt_tokens=100, completion_tokens=2),
        StubReply.empty(),
        StubReply(content="up link-a", prompt_tokens=150, completion_tokens=4),
    ])
    agent = agent_for(server, max_retries=0)
    result = run_episode(TinyEnvironment(), agent, QUERY, TASK, EpisodeConfig(max_steps=4), "openai:gpt-4o")
    assert result.outcome is Outcome.RESOLVED, result.details
    assert [step.action for step in result.steps] == ["show", "", "up link-a"]
    assert result.steps[1].refused and result.steps[1].reply == ""
    assert result.usage.tokens_in == sum(step.usage.tokens_in for step in result.steps) > 250
    assert result.usage.tokens_out == 6 and result.usage.cost_usd > 0
    assert server.requests[0].messages[0]["content"] == TASK.system_prompt
    assert server.requests[2].messages[-1]["content"] == "[Step 3 of 4; 2 replies left.]\nno action recognised"


def test_an_endpoint_failure_is_infra_error_not_the_agents_fault(serve, agent_for):
    server = serve(["show", *[StubReply.error(503, "model overloaded")] * 3])
    agent = agent_for(server, max_retries=2)
    result = run_episode(TinyEnvironment(), agent, QUERY, TASK, EpisodeConfig(max_steps=4), "openai:gpt-4o")
    assert result.outcome is Outcome.INFRA_ERROR
    assert "model overloaded" in result.details and "3 times" in result.details
    assert len(result.steps) == 1 and result.usage.tokens > 0


def test_a_bad_key_is_infra_error_at_once(serve, agent_for):
    server = serve([StubReply.error(401, "Incorrect API key provided")])
    result = run_episode(TinyEnvironment(), agent_for(server, backoff_s=5.0), QUERY, TASK,
                         EpisodeConfig(max_steps=4), "openai:gpt-4o")
    assert result.outcome is Outcome.INFRA_ERROR and "Incorrect API key" in result.details
    assert result.wall_s < 3.0 and len(server.requests) == 1
