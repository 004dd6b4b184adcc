"""ModelAgent through real litellm and real HTTP against the local OpenAI-compatible server."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from pytest_netarena.core.agent import Agent
from pytest_netarena.agents.conversation import EMPTY_REPLY_PLACEHOLDER
from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings
from pytest_netarena.core.types import Reply, Task
from pytest_netarena.core.errors import InfraError, UsageError
from pytest_netarena.testing.openai_server import StubReply

# the task conftest.agent_for resets agents with
TASK = Task("tiny", "e1", "You repair tiny networks.", "zero-shot", 5)


def test_system_prompt_and_observations_are_sent_in_order(serve, agent_for):
    server = serve(["kubectl get pods", "kubectl get networkpolicy"])
    agent = agent_for(server)
    assert isinstance(agent, Agent)
    first = agent.act("pods cannot reach the database")
    second = agent.act("NAME   READY\nweb    1/1")
    assert (first.text, second.text) == ("kubectl get pods", "kubectl get networkpolicy")
    assert [(m["role"], m["content"]) for m in server.requests[1].messages] == [
        ("system", TASK.system_prompt),
        ("user", "pods cannot reach the database"),
        ("assistant", "kubectl get pods"),
        ("user", "NAME   READY\nweb    1/1"),
    ]
    assert server.requests[0].model == "gpt-4o"
    assert server.requests[0].path == "/v1/chat/completions"


def test_reset_starts_a_new_conversation(serve, agent_for):
    server = serve(["one", "two"])
    agent = agent_for(server)
    agent.act("first episode")
    agent.reset(TASK)
    agent.act("second episode")
    assert [m["content"] for m in server.requests[1].messages] == [TASK.system_prompt, "second episode"]


def test_temperature_and_seed_are_passed(serve, agent_for):
    server = serve(["a", "b"])
    agent_for(server, temperature=0.7, seed=1234).act("x")
    agent_for(server).act("x")
    assert (server.requests[0].temperature, server.requests[0].seed) == (0.7, 1234)
    assert server.requests[1].temperature == 0.0
    assert "seed" not in server.requests[1].body


def test_tokens_come_from_the_response_and_a_priced_model_costs_money(serve, agent_for):
    server = serve([StubReply(content="kubectl get pods", prompt_tokens=1000, completion_tokens=200)])
    reply = agent_for(server).act("x")
    assert (reply.usage.tokens_in, reply.usage.tokens_out) == (1000, 200)
    assert isinstance(reply.usage.cost_usd, float)
    # gpt-4o from litellm's bundled price map: $2.50 / M input, $10 / M output at the time of writing
    assert 0.001 < reply.usage.cost_usd < 0.05


def test_an_unpriced_model_costs_zero_without_crashing(serve, agent_for):
    server = serve([StubReply(content="hi", prompt_tokens=10, completion_tokens=3)])
    reply = agent_for(server, model="openai/netarena-local-model-without-price").act("x")
    assert reply == Reply("hi", reply.usage)
    assert reply.usage.tokens == 13
    assert reply.usage.cost_usd == 0.0


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried_then_succeed(serve, agent_for, status):
    server = serve([StubReply.error(status, "try again"), StubReply.error(status, "try again"), "ok"])
    agent = agent_for(server)
    assert agent.act("x").text == "ok"
    assert len(server.requests) == 3 == agent.attempts
    assert [m["content"] for m in agent.messages] == [TASK.system_prompt, "x", "ok"]


def test_infra_error_after_retries_are_exhausted(serve, agent_for):
    server = serve([StubReply.error(503, "overloaded, come back later")] * 5)
    agent = agent_for(server, max_retries=2)
    with pytest.raises(InfraError) as caught:
        agent.act("x")
    assert len(server.requests) == 3
    message = str(caught.value)
    assert "3 times" in message and "503" in message and "overloaded, come back later" in message
    assert agent.messages == [{"role": "system", "content": TASK.system_prompt}], "a failed turn is not kept"


def test_backoff_grows_and_honours_retry_after(serve, agent_for):
    server = serve([StubReply.error(429, "rate limited", retry_after=0.3), "ok"])
    started = time.perf_counter()
    assert agent_for(server).act("x").text == "ok"
    assert time.perf_counter() - started >= 0.3
    server = serve([StubReply.error(500)] * 3 + ["ok"])
    agent_for(server, backoff_s=0.05).act("x")
    times = [request.received_at for request in server.requests]
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1 and gaps[2] >= 0.2


@pytest.mark.parametrize("status", [401, 400, 404])
def test_configuration_errors_fail_at_once_with_the_provider_message(serve, agent_for, status):
    server = serve([StubReply.error(status, f"provider says no ({status})"), "never sent"])
    agent = agent_for(server, backoff_s=5.0)
    started = time.perf_counter()
    with pytest.raises(InfraError, match=rf"not retried.*provider says no \({status}\)"):
        agent.act("x")
    assert time.perf_counter() - started < 2.0
    assert len(server.requests) == 1


def test_missing_api_key_is_a_configuration_error(serve, client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = serve(["never"])
    agent = ModelAgent("openai/gpt-4o", ModelSettings(api_base=server.url + "/v1", backoff_s=5.0, client=client))
    agent.reset(TASK)
    with pytest.raises(InfraError, match="not retried"):
        agent.act("x")
    assert agent.attempts == 1 and not server.requests


def test_unreachable_endpoint_is_retried_then_infra_error(serve, agent_for):
    server = serve()
    agent = agent_for(server, max_retries=1)
    server.stop()  # nothing listens on that port any more
    with pytest.raises(InfraError, match="2 times"):
        agent.act("x")


@pytest.mark.parametrize("garbage", ["<html>bad gateway</html>", '{"unexpected": "shape"}'])
def test_garbage_body_is_retried_as_infrastructure(serve, agent_for, garbage):
    server = serve([StubReply.garbage(garbage), "ok"])
    assert agent_for(server).act("x").text == "ok"
    server = serve([StubReply.garbage(garbage)] * 3)
    with pytest.raises(InfraError, match="2 times"):
        agent_for(server, max_retries=1).act("x")


@pytest.mark.parametrize("empty", [StubReply.empty(), StubReply.no_choices()], ids=["null-content", "no-choices"])
def test_a_well_formed_reply_without_text_is_an_empty_reply(serve, agent_for, empty):
    server = serve([empty, "next"])
    agent = agent_for(server)
    reply = agent.act("x")
    assert reply.text == "" and reply.usage.tokens_in > 0
    agent.act("y")
    assert server.requests[1].messages[2] == {"role": "assistant", "content": EMPTY_REPLY_PLACEHOLDER}
    assert len(server.requests) == 2, "an empty reply is the model's answer, not retried"


def test_slow_reply_times_out_and_is_retried(serve, agent_for):
    server = serve([StubReply.slow(5.0, "too late"), "in time"])
    started = time.perf_counter()
    assert agent_for(server, request_timeout_s=0.3).act("x").text == "in time"
    assert 0.3 <= time.perf_counter() - started < 3.0


def test_the_deadline_bounds_a_whole_act_call(serve, agent_for):
    server = serve([StubReply.slow(5.0, "too late")] * 10)
    agent = agent_for(server, request_timeout_s=0.3, backoff_s=0.2, deadline_s=0.7, max_retries=10)
    started = time.perf_counter()
    with pytest.raises(InfraError, match=r"failed [12] times in \d\.\d s"):
        agent.act("x")
    assert time.perf_counter() - started < 2.5
    assert agent.attempts < 4 < len(server._queue)


def test_slow_replies_exhaust_retries_into_infra_error(serve, agent_for):
    server = serve([StubReply.slow(5.0, "too late")] * 2)
    with pytest.raises(InfraError, match=r"2 times.*(?i:timeout|timed out)"):
        agent_for(server, request_timeout_s=0.3, max_retries=1).act("x")


def test_history_is_truncated_keeping_system_first_observation_and_recent_turns(serve, agent_for):
    server = serve(lambda request: f"reply {len(request['messages'])}")
    agent = agent_for(server, max_history_chars=400)
    observations = [f"observation {index} " + "." * 60 for index in range(10)]
    for observation in observations:
        agent.act(observation)
    sent = server.requests[-1].messages
    assert sum(len(message["content"]) for message in sent) <= 400
    assert sent[0] == {"role": "system", "content": TASK.system_prompt}
    assert sent[1] == {"role": "user", "content": observations[0]}
    assert sent[2]["role"] == "user" and "earlier messages were removed" in sent[2]["content"]
    assert sent[3]["role"] == "user" and sent[-1] == {"role": "user", "content": observations[-1]}
    roles = [message["role"] for message in sent[3:]]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
    dropped = int(sent[2]["content"].split("[", 1)[1].split()[0])
    assert dropped == agent.dropped_messages and len(sent) - 1 + dropped == 2 * len(observations)
    # earlier requests stayed within the limit too and the first ones were not truncated
    assert all(sum(len(m["content"]) for m in request.messages) <= 400 for request in server.requests)
    assert len(server.requests[1].messages) == 4


def test_a_single_huge_observation_is_still_sent(serve, agent_for):
    server = serve(["a", "b"])
    agent = agent_for(server, max_history_chars=100)
    agent.act("first")
    agent.act("x" * 500)
    assert server.requests[-1].messages[-1]["content"] == "x" * 500


def test_plugin_settings_names_are_accepted_and_unknown_ones_rejected(serve, litellm):
    server = serve(["ok"])
    settings = ModelSettings.from_options({
        "llm_api_base": server.url + "/v1", "llm_api_key": "test", "temperature": None,
        "llm_temperature": 0.25, "llm_seed": 9, "llm_max_retries": None, "timeout": 30,
    })
    assert (settings.temperature, settings.seed, settings.max_retries, settings.request_timeout_s) == (0.25, 9, 4, 30.0)
    agent = ModelAgent("openai/gpt-4o", settings)
    agent.reset(TASK)
    agent.act("x")
    assert (server.requests[0].temperature, server.requests[0].seed) == (0.25, 9)
    with pytest.raises(UsageError, match="unknown setting 'llm_colour'.*accepted: .*api_base"):
        ModelSettings.from_options({"llm_colour": "blue"}, "openai/gpt-4o")
    with pytest.raises(UsageError, match="provider/model"):
        ModelAgent("gpt-4o")
    with pytest.raises(UsageError, match="bad setting"):
        ModelSettings.from_options({"llm_max_retries": "many"})
    with pytest.raises(UsageError, match="unknown setting 'tool_calls'"):  # --tool-calls is the planner's alone
        ModelSettings.from_options({"tool_calls": "always"})
    defaults = ModelSettings.from_options({"temperature": None, "seed": None, "max_retries": None,
                                           "llm_temperature": None})
    assert defaults == ModelSettings() and (defaults.temperature, defaults.seed, defaults.max_retries) == (0.0, None, 4)


def test_act_before_reset_is_a_programming_error():
    with pytest.raises(RuntimeError, match="reset"):
        ModelAgent("openai/gpt-4o").act("x")


def test_importing_the_agent_module_does_not_import_litellm():
    code = (
        "import sys\n"
        "import pytest_netarena.agents.model_agent, pytest_netarena.agents.spec\n"
        "from pytest_netarena.agents.model_agent import ModelAgent\n"
        "ModelAgent('openai/gpt-4o').reset(__import__('pytest_netarena.core.types').core.types.Task('t', 'e', 's', 'zero-shot', 1))\n"
        "assert 'litellm' not in sys.modules, 'litellm imported eagerly'\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "LITELLM_LOCAL_MODEL_COST_MAP"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def test_local_cost_map_is_the_default_but_a_user_setting_wins():
    code = (
        "import os\n"
        "from pytest_netarena.agents import model_agent\n"
        "os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'False-by-user'\n"
        "import sys; sys.modules['litellm'] = type(sys)('litellm')\n"  # a stand-in: no 3 s import
        "model_agent.import_litellm()\n"
        "assert os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] == 'False-by-user'\n"
        "os.environ.pop('LITELLM_LOCAL_MODEL_COST_MAP'); model_agent._litellm_module = None\n"
        "model_agent.import_litellm()\n"
        "assert os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] == 'True'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_auto_offers_tools_when_the_provider_takes_them(litellm):
    from pytest_netarena.agents.spec import parse_agent_spec
    from pytest_netarena.core.app import RunOptions
    from pytest_netarena.core.rules import OURS
    from pytest_netarena.run.plan import check_tool_calls, offers_tools, traits_of

    def uses(model: str, mode: str) -> bool:
        return offers_tools(OURS, mode, traits_of(ModelAgent(model)))

    assert uses("openai/gpt-4o", "auto") and uses("anthropic/claude-sonnet-4-20250514", "auto")  # litellm's map says yes
    assert not uses("ollama/netarena-no-such-model", "auto")  # an unknown model: its replies are read as text
    assert not uses("openai/gpt-4o", "never") and uses("openai/gpt-4o", "always")
    with pytest.raises(UsageError, match="does not take tool calls"):
        check_tool_calls(RunOptions(tool_calls="always"), [parse_agent_spec("ollama:netarena-no-such-model")])
