"""The plain-HTTP way to openai/ models: what it does beyond litellm's behaviour (which test_model_agent checks
for both clients): refused parameters, prices without litellm, no litellm import, the choice of client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pytest_netarena.agents import openai_http
from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings, uses_litellm
from pytest_netarena.core.errors import UsageError
from pytest_netarena.testing.openai_server import StubReply

from .conftest import TASK


def refusal(param: str, message: str) -> StubReply:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error", "param": param,
                                 "code": "unsupported_parameter"}})
    return StubReply(status=400, body=body)


def http_agent(server, model: str = "openai/gpt-4o", **settings) -> ModelAgent:
    agent = ModelAgent(model, ModelSettings(api_base=server.url + "/v1", api_key="test", client="http",
                                            backoff_s=0.01, **settings))
    agent.reset(TASK)
    return agent


def test_a_parameter_the_model_refuses_is_dropped_and_the_request_sent_again(serve):
    server = serve([refusal("temperature", "Unsupported value: 'temperature' does not support 0.0 with this model."),
                    refusal("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                          "Use 'max_completion_tokens' instead."),
                    "ok", "again"])
    agent = http_agent(server, model="openai/o-netarena-test", max_tokens=50, seed=3)
    assert agent.act("x").text == "ok"
    first, second, third = (request.body for request in server.requests)
    assert first["temperature"] == 0.0 and first["max_tokens"] == 50
    assert "temperature" not in second and second["max_tokens"] == 50
    assert "temperature" not in third and "max_tokens" not in third and third["max_completion_tokens"] == 50
    assert third["seed"] == 3 and agent.attempts == 1, "adapting the request is not a retry"
    agent.act("y")  # learnt once: the next request is adapted from the start
    assert len(server.requests) == 4 and "temperature" not in server.requests[3].body


def test_a_400_about_something_else_is_a_configuration_error(serve):
    server = serve([refusal("messages", "Invalid 'messages[1].content': string too long."), "never"])
    with pytest.raises(Exception, match="not retried.*string too long"):
        http_agent(server).act("x")
    assert len(server.requests) == 1


@pytest.mark.parametrize("served", ["gpt-4o", "gpt-4o-2024-08-06"])
def test_the_price_equals_litellms(served, litellm):
    response = litellm.ModelResponse(model=served, choices=[{"message": {"role": "assistant", "content": "hi"}}],
                                     usage={"prompt_tokens": 1234, "completion_tokens": 567, "total_tokens": 1801})
    expected = litellm.completion_cost(completion_response=response)
    assert expected > 0
    assert openai_http.price(served, "gpt-4o", 1234, 567) == pytest.approx(expected, rel=1e-9)


def test_cached_prompt_tokens_cost_the_cache_price_and_unknown_models_nothing():
    full = openai_http.price("gpt-4o", "gpt-4o", 1000, 0)
    cached = openai_http.price("gpt-4o", "gpt-4o", 1000, 0, cached=1000)
    assert 0 < cached < full
    assert openai_http.price("netarena-unpriced", "netarena-unpriced", 1000, 1000) == 0.0
    # an entry of another provider is not an OpenAI price
    assert openai_http.price("claude-3-5-sonnet-20241022", "x", 1000, 1000) == 0.0


def test_an_openai_run_never_imports_litellm(serve):
    server = serve(["kubectl get pods"])
    code = (
        "import sys\n"
        "from pytest_netarena.agents.model_agent import ModelAgent, ModelSettings\n"
        "from pytest_netarena.core.types import Task\n"
        f"agent = ModelAgent('openai/gpt-4o', ModelSettings(api_base={server.url + '/v1'!r}, api_key='k'))\n"
        "agent.reset(Task('t', 'e1', 'sys', 'zero-shot', 5))\n"
        "reply = agent.act('go')\n"
        "assert reply.text == 'kubectl get pods' and reply.usage.cost_usd > 0, reply\n"
        "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
    )
    env = {name: value for name, value in os.environ.items() if not name.startswith("OPENAI_")}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)
    assert len(server.requests) == 1


def test_which_models_go_through_litellm():
    assert not uses_litellm("openai/gpt-4o", "auto") and not uses_litellm("openai/gpt-4o", None)
    assert uses_litellm("openai/gpt-4o", "litellm")
    assert uses_litellm("anthropic/claude-sonnet-4-5", "auto") and uses_litellm("ollama/qwen2.5", None)
    with pytest.raises(UsageError, match="not an openai/ model"):
        ModelAgent("anthropic/claude-sonnet-4-5", ModelSettings(client="http"))
    with pytest.raises(UsageError, match="auto, litellm, http"):
        ModelSettings(client="curl")


def test_the_endpoint_and_key_come_from_the_environment_when_not_given(serve, monkeypatch):
    server = serve(["ok"])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    agent = ModelAgent("openai/gpt-4o", ModelSettings(client="http"))
    agent.reset(TASK)
    assert agent.act("x").text == "ok"
    assert server.requests[0].headers.get("Authorization") == "Bearer from-env"
    assert server.requests[0].body["model"] == "gpt-4o"
