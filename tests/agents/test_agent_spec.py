"""--agent spec parsing and agent construction (litellm models, user agents, built-ins)."""

from __future__ import annotations

import re
import textwrap

import pytest

from pytest_netarena.agents.noop import NoopAgent
from pytest_netarena.agents.model_agent import ModelAgent
from pytest_netarena.agents.spec import ACCEPTED_FORMS, AgentSpec, load_python_agent, make_agent, parse_agent_spec
from pytest_netarena.core.types import Task
from pytest_netarena.core.errors import UsageError

# the task conftest.agent_for resets agents with
TASK = Task("tiny", "e1", "You repair tiny networks.", "zero-shot", 5)


@pytest.mark.parametrize(
    ("raw", "target"),
    [
        ("openai:gpt-4o", "openai/gpt-4o"),
        ("anthropic:claude-sonnet-4-5", "anthropic/claude-sonnet-4-5"),
        ("ollama:qwen2.5:7b", "ollama/qwen2.5:7b"),
        (" openrouter:meta-llama/llama-3.1-8b ", "openrouter/meta-llama/llama-3.1-8b"),
    ],
)
def test_model_specs_become_model_agents_named_as_litellm_names_them(raw, target):
    spec = parse_agent_spec(raw)
    assert (spec.kind, spec.target) == ("model", target)
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", spec.slug)


@pytest.mark.parametrize(
    "raw", ["gpt-4o", "", ":gpt-4o", "openai:", "open ai!:gpt-4o", "builtin:nosuch", "python:no_attr", "a2a:not-a-url"]
)
def test_malformed_or_unknown_specs_list_the_accepted_forms(raw):
    with pytest.raises(UsageError) as caught:
        parse_agent_spec(raw, builtin_names=("oracle",))
    message = str(caught.value)
    assert all(form in message for form in ACCEPTED_FORMS)


def test_builtins_are_checked_against_the_app_names():
    assert parse_agent_spec("builtin:oracle", builtin_names=("oracle",)).target == "oracle"
    assert isinstance(make_agent(parse_agent_spec("builtin:noop"), None, None, None), NoopAgent)


def test_python_spec_loads_a_user_agent(tmp_path, monkeypatch):
    (tmp_path / "my_agents.py").write_text(textwrap.dedent("""
        class EchoAgent:
            def reset(self, task): self.system = task.system_prompt
            def act(self, observation): return "echo " + observation
            def close(self): pass

        def make():
            return EchoAgent()

        not_an_agent = 42
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = parse_agent_spec("python:my_agents:make")
    agent = make_agent(spec, None, None, None)
    agent.reset(TASK)
    assert agent.act("hi") == "echo hi" and agent.system == TASK.system_prompt
    assert type(load_python_agent("my_agents:EchoAgent")).__name__ == "EchoAgent"
    with pytest.raises(UsageError, match="did not give an agent"):
        load_python_agent("my_agents:not_an_agent")
    with pytest.raises(UsageError, match="cannot load"):
        load_python_agent("my_agents:missing")
    with pytest.raises(UsageError, match="cannot load"):
        load_python_agent("no_such_module_here:make")


def test_model_spec_settings_reach_the_litellm_agent(serve, litellm):
    server = serve(["kubectl get pods"])
    spec = AgentSpec(
        "openai:gpt-4o", "model", "openai/gpt-4o",
        settings={"llm_api_base": server.url + "/v1", "llm_api_key": "test", "temperature": 0.5, "seed": 3},
    )
    agent = make_agent(spec, None, None, None)
    assert isinstance(agent, ModelAgent)
    agent.reset(TASK)
    assert agent.act("x").text == "kubectl get pods"
    request = server.requests[0]
    assert (request.temperature, request.seed, request.headers.get("Authorization")) == (0.5, 3, "Bearer test")
