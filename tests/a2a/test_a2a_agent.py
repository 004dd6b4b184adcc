"""A2AAgent against real local A2A servers: episodes resolve; slow, dead and broken agents are agent errors."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from pytest_netarena.agents.a2a_agent import A2AAgent, render_prompt, reply_text
from pytest_netarena.core.types import Outcome, Task
from pytest_netarena.core.errors import AgentError, UsageError

# sse-starlette leaves a coroutine behind when uvicorn cancels a stream still open at shutdown (the slow agent)
pytestmark = pytest.mark.filterwarnings("ignore:coroutine .EventSourceResponse:RuntimeWarning")

TASK = Task("toy", "e1", "SYSTEM PROMPT", "zero-shot", 3)


@pytest.mark.parametrize("style", ["message", "task"])
@pytest.mark.parametrize("streaming", [True, False])
def test_episode_through_a2a_resolves(purple, play_toy, solve_toy, style, streaming):
    url = purple(solve_toy, style=style, streaming=streaming)
    result = play_toy(A2AAgent(url, timeout_s=10))
    assert result.outcome is Outcome.RESOLVED, result.details
    assert [step.action for step in result.steps] == [f"set {result.query.params['target']}"]


def test_a2a_0_3_agent_resolves(purple, play_toy, solve_toy):
    """An agent whose card offers only A2A 0.3 (AgentBeats agents on a2a-sdk 0.3) is reached with 0.3."""
    url = purple(solve_toy, protocol_versions=("0.3",))
    agent = A2AAgent(url, timeout_s=10)
    result = play_toy(agent)
    assert result.outcome is Outcome.RESOLVED, result.details
    assert [i.protocol_version for i in agent.card.supported_interfaces] == ["0.3"]


def test_every_turn_carries_system_prompt_and_history(purple, play_toy):
    answers = iter(["set -5", "hmm", "set 1"])
    prompts = []

    def respond(text):
        prompts.append(text)
        return next(answers)

    result = play_toy(A2AAgent(purple(respond), timeout_s=10))
    assert len(prompts) == 3 and result.outcome is Outcome.UNSAFE
    first, last = prompts[0], prompts[2]
    assert first.startswith("You control a counter. Reply 'set N'.\n\n[Step 1 of 3; 3 replies left.]\n"
                            "counter is 0; make it ")
    assert last.startswith("You control a counter.")
    assert "### Observation 1\n[Step 1 of 3; 3 replies left.]\ncounter is 0; make it" in last
    assert "### Your reply 1\nset -5" in last and "### Your reply 2\nhmm" in last
    assert last.index("### Your reply 2") < last.index("## Current observation")


def test_data_part_reply_is_json(purple):
    agent = A2AAgent(purple(lambda text: {"command": "set 3", "n": 3}), timeout_s=10)
    agent.reset(TASK)
    assert json.loads(agent.act("counter is 0").text) == {"command": "set 3", "n": 3}


def test_card_is_fetched_once(purple, solve_toy):
    agent = A2AAgent(purple(solve_toy), timeout_s=10)
    agent.reset(TASK)
    card = agent.card
    agent.reset(TASK)
    assert agent.card is card and card.name == "netarena test purple agent"


def test_slow_agent_is_an_agent_error_within_the_timeout(purple, play_toy):
    async def slow(text):
        await asyncio.sleep(30)
        return "set 1"

    started = time.monotonic()
    result = play_toy(A2AAgent(purple(slow), timeout_s=1.0))
    assert result.outcome is Outcome.AGENT_ERROR
    assert "sent nothing for 1 s" in result.details
    assert time.monotonic() - started < 5


def test_the_deadline_counts_from_the_last_streamed_update(purple, play_toy, solve_toy_after):
    """As NetArena's client: an agent that streams 'working' keeps its turn past timeout_s."""
    url = purple(solve_toy_after(2.2), style="task", heartbeat_s=0.3)
    result = play_toy(A2AAgent(url, timeout_s=1.0))
    assert result.outcome is Outcome.RESOLVED, result.details
    assert result.agent_s > 2.0  # well past timeout_s (the agent answers 2.2 s after its turn began; 2.16 s measured under load)


def test_a_hard_cap_ends_a_reply_that_streams_forever(purple, play_toy):
    async def never(text):
        await asyncio.sleep(8)
        return "set 1"

    started = time.monotonic()
    result = play_toy(A2AAgent(purple(never, style="task", heartbeat_s=0.2), timeout_s=1.0, max_reply_s=1.5))
    assert result.outcome is Outcome.AGENT_ERROR and "did not answer within 1.5 s" in result.details
    assert result.agent_s >= 1.5 and time.monotonic() - started < 6


def test_the_cap_holds_when_the_client_will_not_be_cancelled():
    # a client whose clean-up outlasts the cancellation (a stream closed only when the agent ends it): the cap is
    # kept by the caller's thread, not by the client's cooperation
    async def stubborn():
        for _ in range(2):
            try:
                await asyncio.sleep(3)
            except asyncio.CancelledError:
                continue
        return "late", None

    started = time.monotonic()
    with pytest.raises(AgentError, match="did not answer within 0.5 s"):
        A2AAgent("http://127.0.0.1:9", timeout_s=0.5, max_reply_s=0.5)._run(stubborn(), "sending the prompt", 0.5)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("style", ["message", "task"])
def test_usage_reported_by_the_agent_is_recorded(purple, play_toy, solve_toy, style):
    usage = {"prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.002}
    result = play_toy(A2AAgent(purple(solve_toy, style=style, usage=usage), timeout_s=10))
    assert result.outcome is Outcome.RESOLVED
    assert (result.usage.tokens_in, result.usage.tokens_out) == (120, 30) and result.usage.cost_usd == pytest.approx(0.002)
    hostile = play_toy(A2AAgent(purple(solve_toy, style=style, usage={"prompt_tokens": -5, "cost": "free"}), timeout_s=10))
    assert hostile.usage.tokens == 0 and hostile.usage.cost_usd == 0


def test_unreachable_agent_is_an_agent_error(closed_port_url, play_toy):
    started = time.monotonic()
    result = play_toy(A2AAgent(closed_port_url, timeout_s=10))
    assert result.outcome is Outcome.AGENT_ERROR
    assert "cannot connect" in result.details and closed_port_url in result.details
    assert time.monotonic() - started < 5


def test_garbage_reply_is_an_agent_error(garbage_url, play_toy):
    result = play_toy(A2AAgent(garbage_url, timeout_s=10))
    assert result.outcome is Outcome.AGENT_ERROR
    assert "sending the prompt" in result.details and "JSON" in result.details


@pytest.mark.parametrize("style", ["message", "task"])
def test_agent_raising_is_an_agent_error(purple, play_toy, style):
    def broken(text):
        raise RuntimeError("model crashed")

    result = play_toy(A2AAgent(purple(broken, style=style), timeout_s=10))
    assert result.outcome is Outcome.AGENT_ERROR and "model crashed" in result.details


def test_reply_without_parts_is_an_agent_error_but_empty_text_is_a_reply(purple, play_toy):
    assert play_toy(A2AAgent(purple(lambda text: []), timeout_s=10)).outcome is Outcome.AGENT_ERROR
    result = play_toy(A2AAgent(purple(lambda text: ""), timeout_s=10))
    assert result.outcome is Outcome.UNRESOLVED and [s.reply for s in result.steps] == ["", "", ""]


def test_bad_url_and_unknown_setting_are_usage_errors():
    with pytest.raises(UsageError, match="http"):
        A2AAgent("localhost:9009")
    with pytest.raises(UsageError, match="unknown setting 'temperature'"):
        A2AAgent("http://127.0.0.1:9", temperature=0)
    assert A2AAgent("http://127.0.0.1:9/", timeout=5).timeout_s == 5


# reading replies like NetArena's client, on events built by hand


def _events(*pieces):
    from a2a.types.a2a_pb2 import StreamResponse

    return [StreamResponse(**piece) for piece in pieces]


def test_reply_text_from_task_updates_takes_the_last_artifact():
    from a2a.helpers import new_data_part, new_text_message, new_text_part
    from a2a.types.a2a_pb2 import (
        Artifact,
        TaskArtifactUpdateEvent,
        TaskState,
        TaskStatus,
        TaskStatusUpdateEvent,
    )
    from a2a.types.a2a_pb2 import Task as A2ATask

    events = _events(
        {"task": A2ATask(id="t", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))},
        {"status_update": TaskStatusUpdateEvent(task_id="t", status=TaskStatus(
            state=TaskState.TASK_STATE_WORKING, message=new_text_message("thinking")))},
        {"artifact_update": TaskArtifactUpdateEvent(task_id="t", artifact=Artifact(artifact_id="a", parts=[new_text_part("old")]))},
        {"artifact_update": TaskArtifactUpdateEvent(task_id="t", artifact=Artifact(artifact_id="b", parts=[new_text_part("set 4")]))},
        {"artifact_update": TaskArtifactUpdateEvent(task_id="t", append=True, artifact=Artifact(
            artifact_id="b", parts=[new_data_part({"k": 1})]))},
        {"status_update": TaskStatusUpdateEvent(task_id="t", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED))},
    )
    assert reply_text(events) == 'set 4\n{\n  "k": 1.0\n}'


def test_reply_text_falls_back_to_the_last_agent_message_and_rejects_failures():
    from a2a.helpers import new_text_message
    from a2a.types.a2a_pb2 import Role, TaskState, TaskStatus
    from a2a.types.a2a_pb2 import Task as A2ATask

    history = [new_text_message("prompt", role=Role.ROLE_USER), new_text_message("set 9")]
    done = A2ATask(id="t", status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED), history=history)
    assert reply_text(_events({"task": done})) == "set 9"
    failed = A2ATask(id="t", status=TaskStatus(state=TaskState.TASK_STATE_FAILED, message=new_text_message("quota")))
    with pytest.raises(AgentError, match="ended failed: quota"):
        reply_text(_events({"task": failed}))
    with pytest.raises(AgentError, match="no artifact and no agent message"):
        reply_text(_events({"task": A2ATask(id="t", history=history[:1])}))
    with pytest.raises(AgentError, match="no event"):
        reply_text([])


def test_render_prompt_drops_middle_turns_when_too_long():
    turns = [(f"obs {i} " + "x" * 100, f"reply {i}") for i in range(1, 11)]
    text = render_prompt("SYS", turns, "now", max_chars=600)
    assert len(text) <= 600
    assert "### Observation 1\nobs 1" in text and "### Your reply 10\nreply 10" in text
    assert "earlier turns omitted]" in text and "obs 2 " not in text
    assert text.endswith("## Current observation\nnow\n\nReply with your next action.")
    assert render_prompt("SYS", [], "first") == "SYS\n\nfirst"

